// Errors of the schemas/ module. None of them is retriable: the same bytes or value fail the same way.
import { TrajflowError } from '../core/errors.js';

/** Why bytes could not be decoded; consumers use it as the dead-letter reason. */
export type DecodeFailure = 'bad-marker' | 'unknown-fingerprint' | 'truncated' | 'invalid-value' | 'oversize' | 'wrong-event';

/** Bytes are not a readable single-object-encoded trajflow event. */
export class DecodeError extends TrajflowError {
  readonly reason: DecodeFailure;

  constructor(reason: DecodeFailure, message: string, options: { cause?: unknown } = {}) {
    super('DECODE', message, options);
    this.reason = reason;
  }
}

/** A value handed to encode does not fit the event's schema; `field` is a dotted path like `actionLogProbs[3]`. */
export class InvalidEventError extends TrajflowError {
  readonly event: string;
  readonly field: string;

  constructor(event: string, field: string, message: string, options: { cause?: unknown } = {}) {
    super('INVALID_EVENT', message, options);
    this.event = event;
    this.field = field;
  }
}

/** An encoded event would exceed the codec's maxEventBytes (Kafka rejects big records, consumers dead-letter them). */
export class OversizeEventError extends TrajflowError {
  readonly event: string;
  readonly bytes: number;
  readonly limit: number;

  constructor(event: string, bytes: number, limit: number) {
    super('OVERSIZE', `${event} event needs at least ${bytes} bytes encoded, over maxEventBytes (${limit})`);
    this.event = event;
    this.bytes = bytes;
    this.limit = limit;
  }
}

/** A schema is malformed, unknown, or conflicts with one already registered. */
export class SchemaError extends TrajflowError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('SCHEMA', message, options);
  }
}
