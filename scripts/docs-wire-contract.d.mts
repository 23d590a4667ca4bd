// Types of docs-wire-contract.mjs for test/docs-wire-contract.unit.spec.ts.
import type { SchemaEntry, SchemaRegistry } from '../schemas/index.js';

export const WIRE_CONTRACT_PAGE: string;

/** A field of an event as the page lists it: `steps[].stepIndex`, its Avro type as the page names it, the default as JSON. */
export interface FieldRow {
  readonly path: string;
  readonly type: string;
  readonly default: string;
  readonly doc: string;
}

/** An Avro type as the page writes it: `array<int>`, `null | string`, `long (timestamp-millis)`, a record's name. */
export function avroTypeName(type: unknown): string;
/** Every field of a record schema (parsed JSON), nested records' fields included. */
export function fieldRows(schema: unknown, prefix?: string): FieldRow[];
/** The registered versions of every event, oldest first. */
export function eventVersions(registry?: SchemaRegistry): Map<string, SchemaEntry[]>;
/** The generated blocks by name. */
export function generatedBlocks(registry?: SchemaRegistry): Record<string, string>;
/** The page with every generated block replaced. */
export function renderPage(page: string, blocks: Record<string, string>): string;
