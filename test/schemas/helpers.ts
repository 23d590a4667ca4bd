// Shared by the schemas tests: a codec over the project's schemas, and avsc's own (unmodified) types
// as the reference implementation the fast paths are checked against.
import { readFileSync } from 'node:fs';
import avsc from 'avsc';
import { EventCodec, SchemaRegistry, type EventName, listSchemaFiles } from '../../schemas/index.js';

export const registry = SchemaRegistry.fromSchemasDir();
export const codec = new EventCodec(registry);

/** avsc's type for the current schema of an event, built without trajflow's changes. */
export function referenceType(event: EventName): avsc.Type {
  const file = listSchemaFiles()
    .filter((f) => f.event === event)
    .at(-1)!;
  return avsc.Type.forSchema(JSON.parse(readFileSync(file.path, 'utf8')) as avsc.Schema);
}

/** A deep copy with every object made plain (avsc's reference decoder returns record class instances). */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
}

/** The datum of a single-object-encoded event (after the 10-byte header). */
export function datumOf(bytes: Buffer): Buffer {
  return bytes.subarray(10);
}
