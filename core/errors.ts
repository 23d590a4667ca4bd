// One error hierarchy for trajflow. Every error says whether retrying can help (kafkajs' lesson):
// the retry helpers never retry an error whose `retriable` is false.
export class TrajflowError extends Error {
  readonly retriable: boolean;
  readonly code: string;

  constructor(code: string, message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/** A configuration value is missing or wrong; the message says how to fix it. */
export class ConfigError extends TrajflowError {
  constructor(message: string) {
    super('CONFIG', message);
  }
}

/** A service (Kafka, ClickHouse) could not be started or reached. */
export class ServiceError extends TrajflowError {
  constructor(message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super('SERVICE', message, options);
  }
}
