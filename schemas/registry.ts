// Writer schemas by fingerprint, the current schema of each event, and cached resolvers.
//
// An event's *current* schema is its highest version; the codec writes with it and reads every event
// into it. Older versions stay registered so their events remain readable: Avro's resolution rules
// (spec, "Schema Resolution") fill fields the writer lacked from the reader's defaults and skip
// fields the reader lacks. Schemas learned elsewhere (another service's newer version, published to
// the schemas topic) are added with register() and only ever serve as writer schemas.
import { readFileSync } from 'node:fs';
import type { Type } from 'avsc';
import { createAvroType } from './avro-type.js';
import { canonicalForm } from './canonical.js';
import { SchemaError } from './errors.js';
import { defaultSchemasDir, listSchemaFiles } from './files.js';
import { crc64Avro, fingerprintBytes, fingerprintHex, parseFingerprintHex } from './fingerprint.js';
import { eventNames, recordNames, type EventName } from './generated/types.js';

/** The single-object encoding marker (spec, "Single object encoding"). */
export const MARKER = Buffer.from([0xc3, 0x01]);
/** Marker plus 8-byte fingerprint. */
export const HEADER_BYTES = 10;

export type Resolver = ReturnType<Type['createResolver']>;

/** A registered schema. */
export interface SchemaEntry {
  readonly event: EventName;
  /** The N of schemas/<event>/vN.avsc; 0 for a schema learned elsewhere whose version was not given. */
  readonly version: number;
  /** CRC-64-AVRO of the Parsing Canonical Form. */
  readonly fingerprint: bigint;
  /** The fingerprint as 16 hex digits, most significant first (the header holds it little-endian). */
  readonly fingerprintHex: string;
  /** Parsing Canonical Form. */
  readonly canonical: string;
  /** The schema's JSON text as registered (with docs and defaults, which the canonical form drops). */
  readonly schema: string;
  /** The avsc type of the schema. */
  readonly type: Type;
  /** The 10-byte single-object header of events written with this schema. */
  readonly header: Buffer;
}

type MutableEntry = { -readonly [K in keyof SchemaEntry]: SchemaEntry[K] };

/** Whether a string names a trajflow event. */
export function isEventName(name: string): name is EventName {
  return (eventNames as readonly string[]).includes(name);
}

const eventByRecordName = new Map<string, EventName>(eventNames.map((event) => [recordNames[event], event]));

export class SchemaRegistry {
  private readonly byFingerprint = new Map<bigint, MutableEntry>();
  private readonly currentByEvent = new Map<EventName, SchemaEntry>();
  // reader entry -> writer entry -> resolver, or the error resolution failed with.
  private readonly resolvers = new Map<SchemaEntry, Map<SchemaEntry, Resolver | SchemaError>>();

  /** Loads every <event>/vN.avsc under dir (default: the project's schemas/ folder). */
  static fromSchemasDir(dir: string = defaultSchemasDir): SchemaRegistry {
    const registry = new SchemaRegistry();
    for (const file of listSchemaFiles(dir)) {
      if (!isEventName(file.event)) {
        throw new SchemaError(
          `${file.path}: '${file.event}' is not a known event (${eventNames.join(', ')}); after adding an event folder run \`node --import tsx schemas/codegen.ts\``,
        );
      }
      registry.addVersion(file.event, file.version, readFileSync(file.path, 'utf8'));
    }
    return registry;
  }

  /** Adds version `version` of an event's schema; the highest version becomes the event's current schema. */
  addVersion(event: EventName, version: number, schema: string | object): SchemaEntry {
    if (!Number.isInteger(version) || version < 1) throw new SchemaError(`schema version must be an integer >= 1, got ${version}`);
    const clash = this.entries().find((e) => e.event === event && e.version === version);
    const entry = this.add(schema, event);
    if (clash && clash !== entry) throw new SchemaError(`${event} v${version} is already registered with another schema (${clash.fingerprintHex})`);
    entry.version = Math.max(entry.version, version);
    const current = this.currentByEvent.get(event);
    if (!current || current.version < entry.version) this.currentByEvent.set(event, entry);
    return entry;
  }

  /**
   * Registers a writer schema learned elsewhere (e.g. from the schemas topic), so events written with it
   * can be decoded. The event defaults to the one whose record has the schema's full name; `version`
   * is recorded for entries() only. Registering a known schema returns its entry. It never changes an
   * event's current schema: a process keeps writing and reading the versions it was built with.
   */
  register(schema: string | object, event?: string, version?: number): SchemaEntry {
    if (event !== undefined && !isEventName(event)) {
      throw new SchemaError(`'${event}' is not a known event (${eventNames.join(', ')})`);
    }
    const entry = this.add(schema, event);
    if (entry.version === 0 && version !== undefined && Number.isInteger(version) && version > 0) entry.version = version;
    return entry;
  }

  /** The writer schema with this fingerprint (a bigint, or 16 hex digits). */
  lookup(fingerprint: bigint | string): SchemaEntry | undefined {
    return this.byFingerprint.get(typeof fingerprint === 'string' ? parseFingerprintHex(fingerprint) : fingerprint);
  }

  /** The current schema of an event (its highest version). */
  current(event: EventName): SchemaEntry {
    const entry = this.currentByEvent.get(event);
    if (!entry) throw new SchemaError(`no schema version registered for event '${event}'`);
    return entry;
  }

  /** Whether the event has a current schema. */
  has(event: EventName): boolean {
    return this.currentByEvent.has(event);
  }

  /** Every registered schema, in registration order. */
  entries(): SchemaEntry[] {
    return [...this.byFingerprint.values()];
  }

  /**
   * The avsc resolver that reads data written with `writer` into `reader`, built once per pair;
   * undefined when they are the same schema (no resolution needed). Throws SchemaError when Avro's
   * rules cannot resolve them (e.g. a field added without a default).
   */
  resolver(writer: SchemaEntry, reader: SchemaEntry): Resolver | undefined {
    if (writer === reader) return undefined;
    let byWriter = this.resolvers.get(reader);
    if (!byWriter) this.resolvers.set(reader, (byWriter = new Map()));
    let resolver = byWriter.get(writer);
    if (!resolver) {
      try {
        resolver = reader.type.createResolver(writer.type);
      } catch (err) {
        resolver = new SchemaError(
          `schema ${writer.fingerprintHex} (${writer.event}${writer.version > 0 ? ` v${writer.version}` : ''}) cannot be read as ` +
            `${reader.event} v${reader.version}: ${(err as Error).message}`,
          { cause: err },
        );
      }
      byWriter.set(writer, resolver);
    }
    if (resolver instanceof SchemaError) throw resolver;
    return resolver;
  }

  private add(schema: string | object, event: EventName | undefined): MutableEntry {
    const text = typeof schema === 'string' ? schema : JSON.stringify(schema);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new SchemaError(`schema is not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    const canonical = canonicalForm(parsed);
    const fingerprint = crc64Avro(canonical);
    const known = this.byFingerprint.get(fingerprint);
    const owner = event ?? known?.event ?? this.eventOf(canonical);
    if (known) {
      if (known.event !== owner) throw new SchemaError(`schema ${known.fingerprintHex} is already registered for event '${known.event}', not '${owner}'`);
      return known;
    }
    let type: Type;
    try {
      type = createAvroType(parsed);
    } catch (err) {
      throw new SchemaError(`invalid Avro schema for event '${owner}': ${(err as Error).message}`, { cause: err });
    }
    const entry: MutableEntry = {
      event: owner,
      version: 0,
      fingerprint,
      fingerprintHex: fingerprintHex(fingerprint),
      canonical,
      schema: text,
      type,
      header: Buffer.concat([MARKER, fingerprintBytes(fingerprint)]),
    };
    this.byFingerprint.set(fingerprint, entry);
    return entry;
  }

  private eventOf(canonical: string): EventName {
    const parsed = JSON.parse(canonical) as { name?: unknown };
    const event = typeof parsed.name === 'string' ? eventByRecordName.get(parsed.name) : undefined;
    if (!event) {
      throw new SchemaError(
        `cannot tell which event schema ${String(parsed.name ?? canonical.slice(0, 40))} belongs to: ` +
          `its record is none of ${[...eventByRecordName.keys()].join(', ')}; pass the event name`,
      );
    }
    return event;
  }
}
