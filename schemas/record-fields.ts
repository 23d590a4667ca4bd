// The field types of a record schema, for the wire paths (wire-step.ts, wire-writer.ts): they read and write
// the fields they do not splice with the schema's own avsc types through a Tap (tap.ts), so those bytes are
// exactly what the codec reads and writes.
import type { SchemaEntry } from './registry.js';
import type { Tap } from './tap.js';

/** The avsc type of one field of a record type (the types the codec itself reads and writes with). */
export interface FieldType {
  _read(tap: Tap): unknown;
  _write(tap: Tap, value: unknown): void;
}

/**
 * The field types of a schema's record, checked against the version, names and order the caller was written
 * for; null for another version or other fields (the caller then leaves the event to the codec).
 */
export function recordFieldsOf(entry: SchemaEntry, version: number, expected: readonly string[]): FieldType[] | null {
  if (entry.version !== version) return null;
  const fields = (entry.type as unknown as { fields?: { name: string; type: FieldType }[] }).fields;
  if (!fields || fields.length !== expected.length || fields.some((f, i) => f.name !== expected[i])) return null;
  return fields.map((f) => f.type);
}
