// The TypeScript SDK for custom environments: publish step events to <prefix>.env.steps, keyed by group
// id so a whole group lands on one partition. Every event is checked before it is queued — Avro types
// and the step's semantic rules — and a bad one throws InvalidEventError naming the field; nothing is
// sent for it.
import { InvalidEventError, type StepEvent, validateIngestStep } from '../schemas/index.js';
import type { EventProducer } from './event-producer.js';

export class StepPublisher {
  constructor(
    private readonly producer: EventProducer,
    /** The steps topic, e.g. topicName(config, 'env.steps'). */
    readonly topic: string,
  ) {}

  /** Resolves once the broker acknowledged the step (acks=all); throws InvalidEventError at once on a bad step. */
  publish(step: StepEvent): Promise<void> {
    checkStep(step);
    return this.producer.send(this.topic, 'step', step, step.groupId);
  }

  /** Publishes a whole episode or group; validation of every step happens before any is queued. */
  publishAll(steps: readonly StepEvent[]): Promise<void> {
    steps.forEach(checkStep);
    return Promise.all(steps.map((step) => this.producer.send(this.topic, 'step', step, step.groupId))).then(() => undefined);
  }

  flush(): Promise<void> {
    return this.producer.flush();
  }
}

// The SDK refuses what HTTP ingest refuses (the event's rules and the id grammar the read API queries by), so
// a step published from TypeScript can be read back through every endpoint, as one posted over HTTP can.
function checkStep(step: StepEvent): void {
  const check = validateIngestStep(step);
  if (!check.ok) throw new InvalidEventError('step', check.field, `step.${check.field}: ${check.message}`);
}
