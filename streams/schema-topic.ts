// Every schema trajflow writes is published to a compacted topic (<prefix>.schemas), keyed by its
// CRC-64-AVRO fingerprint, so any consumer — in any language — can resolve a writer schema it has
// not seen. Values are plain JSON (not Avro) so a reader needs nothing to bootstrap.
import type { Kafka } from 'kafkajs';
import type { SchemaRegistry } from '../schemas/index.js';
import type { EventProducer } from './event-producer.js';
import { createReplay } from './replay.js';

export interface SchemaRecord {
  readonly event: string;
  readonly version: number;
  readonly fingerprint: string;
  /** The full schema (with docs and defaults) as JSON text; readers need defaults for resolution. */
  readonly schema: string;
  readonly canonical: string;
}

export async function publishSchemas(producer: EventProducer, registry: SchemaRegistry, topic: string): Promise<number> {
  const entries = [...registry.entries()];
  await Promise.all(
    entries.map((entry) => {
      const record: SchemaRecord = {
        event: entry.event,
        version: entry.version,
        fingerprint: entry.fingerprintHex,
        schema: entry.schema,
        canonical: entry.canonical,
      };
      return producer.sendRaw(topic, { key: entry.fingerprintHex, value: Buffer.from(JSON.stringify(record)) });
    }),
  );
  return entries.length;
}

/** Reads the schemas topic from the beginning to its current end and registers every schema in it. */
export async function loadSchemasFromTopic(kafka: Kafka, registry: SchemaRegistry, topic: string): Promise<number> {
  const replay = await createReplay<SchemaRecord>(kafka, {
    topic,
    decode: (payload) => JSON.parse(payload?.toString('utf8') ?? 'null') as SchemaRecord,
    classify: (error) => (error instanceof SyntaxError ? { reason: 'invalid-value', detail: error.message } : undefined),
  });
  let registered = 0;
  await new Promise<void>((resolve, reject) => {
    replay.events$.subscribe({
      next: ({ value }) => {
        if (value && typeof value.schema === 'string') {
          registry.register(value.schema, value.event, value.version);
          registered++;
        }
      },
      error: reject,
      complete: resolve,
    });
  });
  return registered;
}
