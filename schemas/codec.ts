// Avro single-object encoding of trajflow events (spec, "Single object encoding"):
//   C3 01 | CRC-64-AVRO fingerprint of the writer schema, little-endian (8 bytes) | Avro binary datum.
// encode writes with the event's current schema; decode finds the writer schema by fingerprint and
// reads into the current schema, through a cached resolver when the writer is another version.
import { ConfigError } from '../core/errors.js';
import { CorruptBlockError } from './avro-type.js';
import { DecodeError, OversizeEventError } from './errors.js';
import type { EventName, EventTypes } from './generated/types.js';
import { describeInvalid } from './invalid.js';
import { HEADER_BYTES, type Resolver, type SchemaEntry, type SchemaRegistry } from './registry.js';

export interface EventCodecOptions {
  /** Largest encoded event, header included, that encode writes and decode accepts. Default 1 MiB. */
  maxEventBytes?: number;
}

export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

/** A decoded event of any kind; switch on `event` to narrow `value`. */
export type AnyEvent = { [N in EventName]: { event: N; value: EventTypes[N] } }[EventName];

const INITIAL_SCRATCH_BYTES = 64 * 1024;

export class EventCodec {
  readonly registry: SchemaRegistry;
  readonly maxEventBytes: number;
  // Reused for every encode: avsc writes into it, then the bytes are copied out at their exact size.
  private scratch: Buffer;

  constructor(registry: SchemaRegistry, options: EventCodecOptions = {}) {
    const { maxEventBytes = DEFAULT_MAX_EVENT_BYTES } = options;
    if (!Number.isInteger(maxEventBytes) || maxEventBytes <= HEADER_BYTES) {
      throw new ConfigError(`maxEventBytes must be an integer above ${HEADER_BYTES} (default ${DEFAULT_MAX_EVENT_BYTES}), got ${maxEventBytes}`);
    }
    this.registry = registry;
    this.maxEventBytes = maxEventBytes;
    this.scratch = Buffer.allocUnsafe(Math.min(INITIAL_SCRATCH_BYTES, maxEventBytes));
  }

  /** Encodes a value with the event's current schema. Throws InvalidEventError or OversizeEventError. */
  encode<N extends EventName>(event: N, value: EventTypes[N]): Buffer {
    const entry = this.registry.current(event);
    let end: number;
    try {
      end = entry.type.encode(value, this.scratch, HEADER_BYTES);
    } catch (err) {
      throw describeInvalid(event, entry.type, value, err);
    }
    if (end < 0) {
      // avsc returns minus the bytes it lacked; the value is valid (it was fully walked), so retry bigger.
      const needed = this.scratch.length - end;
      if (needed > this.maxEventBytes) throw new OversizeEventError(event, needed, this.maxEventBytes);
      this.scratch = Buffer.allocUnsafe(Math.min(this.maxEventBytes, Math.max(needed, 2 * this.scratch.length)));
      end = entry.type.encode(value, this.scratch, HEADER_BYTES);
    }
    const out = Buffer.allocUnsafe(end);
    entry.header.copy(out, 0);
    this.scratch.copy(out, HEADER_BYTES, HEADER_BYTES, end);
    return out;
  }

  /** Decodes an event that must be of kind `event`, into its current schema. Throws DecodeError. */
  decode<N extends EventName>(event: N, bytes: Buffer): EventTypes[N] {
    const writer = this.writerOf(bytes);
    if (writer.event !== event) {
      throw new DecodeError('wrong-event', `expected a ${event} event, got a ${writer.event} event (schema ${writer.fingerprintHex})`);
    }
    return this.read(writer, bytes) as EventTypes[N];
  }

  /** Decodes an event of any kind, into the current schema of its kind. Throws DecodeError. */
  decodeAny(bytes: Buffer): AnyEvent {
    const writer = this.writerOf(bytes);
    return { event: writer.event, value: this.read(writer, bytes) } as AnyEvent;
  }

  /** The fingerprint (16 hex digits) of the event's current schema, as written in every header. */
  fingerprintOf(event: EventName): string {
    return this.registry.current(event).fingerprintHex;
  }

  /** The writer schema named by the header of bytes. */
  writerOf(bytes: Buffer): SchemaEntry {
    if (bytes.length > this.maxEventBytes) {
      throw new DecodeError('oversize', `event of ${bytes.length} bytes is over maxEventBytes (${this.maxEventBytes})`);
    }
    if (bytes.length < 2 || bytes[0] !== 0xc3 || bytes[1] !== 0x01) {
      const start = bytes.subarray(0, 2).toString('hex') || 'nothing';
      throw new DecodeError('bad-marker', `not an Avro single-object event: starts with ${start}, expected c301`);
    }
    if (bytes.length < HEADER_BYTES) {
      throw new DecodeError('truncated', `event of ${bytes.length} bytes is shorter than the ${HEADER_BYTES}-byte header`);
    }
    const writer = this.registry.lookup(bytes.readBigUInt64LE(2));
    if (!writer) {
      const hex = bytes.readBigUInt64LE(2).toString(16).padStart(16, '0');
      throw new DecodeError('unknown-fingerprint', `no schema registered with fingerprint ${hex}`);
    }
    return writer;
  }

  private read(writer: SchemaEntry, bytes: Buffer): unknown {
    const reader = this.registry.current(writer.event);
    let resolver: Resolver | undefined;
    try {
      resolver = this.registry.resolver(writer, reader);
    } catch (err) {
      throw new DecodeError('wrong-event', (err as Error).message, { cause: err });
    }
    let result: { value: unknown; offset: number };
    try {
      result = reader.type.decode(bytes, HEADER_BYTES, resolver);
    } catch (err) {
      const truncated = err instanceof CorruptBlockError && err.remaining < 0;
      throw new DecodeError(truncated ? 'truncated' : 'invalid-value', `corrupt ${writer.event} event: ${(err as Error).message}`, { cause: err });
    }
    if (result.offset < 0) {
      throw new DecodeError('truncated', `${writer.event} event ends before its datum does (${bytes.length} bytes)`);
    }
    if (result.offset !== bytes.length) {
      throw new DecodeError('invalid-value', `${writer.event} event has ${bytes.length - result.offset} trailing bytes after its datum`);
    }
    return result.value;
  }
}
