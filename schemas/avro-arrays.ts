// Array and map reading/writing for the avsc types trajflow builds (see avro-type.ts for why).
//
// Bounded block counts: an Avro array or map is a series of blocks, each prefixed with its item count
// (spec, "Complex Types / Arrays" and "Maps"). avsc trusts the count, so one corrupt varint (say 2^50)
// makes it loop for hours past the end of the buffer. Every array item and map entry takes at least
// one byte, so a count above the bytes left can only be corruption: CorruptBlockError instead.
// (Arrays whose items encode to zero bytes, e.g. array<null>, keep the unbounded read.)
//
// Fast paths for array<int> and array<float>, the bulk of step and sample events (token ids,
// log-probs, masks, advantages): the varint and float loops are inlined instead of one virtual call
// per item. They apply only when reading with the type itself; through a resolver (another writer
// version) the generic path runs, because the writer's items may differ (int promoted to long ...).
//
// These functions use avsc 5.7 internals: Tap {buf, pos, readLong, skipLong, readString, skipString},
// the _read/_skip/_write protocol, and Resolver._readerType.
import { readStringCached } from './avro-strings.js';
import type { Tap } from './tap.js';

export type { Tap } from './tap.js';

export interface Item {
  _read(tap: Tap): unknown;
  _skip(tap: Tap): void;
  _write(tap: Tap, value: unknown): void;
}

/** A block count larger than the bytes left: the datum is corrupt (or truncated, if the tap ran past the end). */
export class CorruptBlockError extends Error {
  constructor(
    readonly count: number,
    readonly remaining: number,
  ) {
    super(remaining < 0 ? `block count ${count} read past the end of the datum` : `corrupt block count ${count} with only ${remaining} bytes left`);
  }
}

/** Array types whose items encode to zero bytes: their counts cannot be bounded by the bytes left. */
export const zeroSizeItems = new WeakSet<object>();

function checkCount(tap: Tap, count: number): void {
  const remaining = tap.buf.length - tap.pos;
  if (count > remaining) throw new CorruptBlockError(count, remaining);
}

function readCount(tap: Tap): number {
  let n = tap.readLong();
  if (n < 0) {
    n = -n;
    tap.skipLong(); // a negative count is followed by the block's size in bytes (spec)
  }
  return n;
}

type ArrayLike = { itemsType: Item; _readerType?: object };

// `this` is the array type, or a Resolver whose reader type is it (ArrayType._update copies _read).
export function readArray(this: ArrayLike, tap: Tap): unknown[] {
  const bounded = !zeroSizeItems.has(this._readerType ?? this);
  const items = this.itemsType;
  let value: unknown[] | undefined;
  let i = 0;
  let n: number;
  while ((n = readCount(tap))) {
    if (bounded) checkCount(tap, n);
    value ??= new Array(n);
    while (n--) value[i++] = items._read(tap);
  }
  return value ?? [];
}

export function skipArray(this: ArrayLike, tap: Tap): void {
  const bounded = !zeroSizeItems.has(this);
  let n: number;
  while ((n = tap.readLong())) {
    if (n < 0) {
      tap.pos += tap.readLong(); // skip the whole block by its byte size
      continue;
    }
    if (bounded) checkCount(tap, n);
    while (n--) this.itemsType._skip(tap);
  }
}

type MapLike = { valuesType: Item };

export function readMap(this: MapLike, tap: Tap): Record<string, unknown> {
  const values = this.valuesType;
  const value: Record<string, unknown> = {};
  let n: number;
  while ((n = readCount(tap))) {
    checkCount(tap, n); // every entry has a key, at least its one-byte length
    while (n--) {
      const key = readStringCached(tap);
      value[key] = values._read(tap);
    }
  }
  return value;
}

export function skipMap(this: MapLike, tap: Tap): void {
  let n: number;
  while ((n = tap.readLong())) {
    if (n < 0) {
      tap.pos += tap.readLong();
      continue;
    }
    checkCount(tap, n);
    while (n--) {
      tap.skipString();
      this.valuesType._skip(tap);
    }
  }
}

// --- array<int> ---

export function readIntArray(this: ArrayLike, tap: Tap): number[] {
  if (this._readerType !== undefined) return readArray.call(this, tap) as number[];
  const buf = tap.buf;
  let value: number[] | undefined;
  let i = 0;
  let n: number;
  while ((n = readCount(tap))) {
    checkCount(tap, n);
    value ??= new Array(n);
    let pos = tap.pos;
    while (n--) {
      // Zigzag varint of at most 5 bytes (spec, "Primitive Types": int is 32-bit).
      let b = buf[pos++]!;
      let m = b & 0x7f;
      if (b & 0x80) {
        b = buf[pos++]!;
        m |= (b & 0x7f) << 7;
        if (b & 0x80) {
          b = buf[pos++]!;
          m |= (b & 0x7f) << 14;
          if (b & 0x80) {
            b = buf[pos++]!;
            m |= (b & 0x7f) << 21;
            if (b & 0x80) {
              b = buf[pos++]!;
              if (b & 0xf0) throw new RangeError('int varint longer than 32 bits');
              m |= b << 28;
            }
          }
        }
      }
      value[i++] = (m >>> 1) ^ -(m & 1);
    }
    tap.pos = pos; // past the end if the datum was cut: decode then reports it truncated
  }
  return value ?? [];
}

export function writeIntArray(this: ArrayLike, tap: Tap, value: unknown): void {
  if (!Array.isArray(value)) throw new TypeError('invalid array');
  const n = value.length;
  if (n > 0) {
    tap.writeLong(n);
    const buf = tap.buf;
    let pos = tap.pos;
    for (let i = 0; i < n; i++) {
      const v = value[i];
      if (v !== (v | 0)) throw new TypeError(`invalid "int": ${v}`);
      let m = ((v << 1) ^ (v >> 31)) >>> 0;
      // Writes past the end of buf are dropped and pos keeps counting: encode then reports the
      // missing bytes and the codec retries with a bigger buffer.
      while (m > 0x7f) {
        buf[pos++] = (m & 0x7f) | 0x80;
        m >>>= 7;
      }
      buf[pos++] = m;
    }
    tap.pos = pos;
  }
  tap.writeLong(0);
}

// --- array<float> ---
// Floats go through an aligned Float32Array scratch: one native copy of the block, then typed reads,
// about 2.5x faster than assembling each float from its 4 bytes. Little-endian platforms only
// (Avro floats are little-endian); avro-type.ts uses the generic path elsewhere.

/** Whether the float fast path may be used (every platform Node runs on today). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let floats = new Float32Array(256);
let floatBytes = new Uint8Array(floats.buffer);

function floatScratch(n: number): Float32Array {
  if (floats.length < n) {
    floats = new Float32Array(2 ** Math.ceil(Math.log2(n)));
    floatBytes = new Uint8Array(floats.buffer);
  }
  return floats;
}

export function readFloatArray(this: ArrayLike, tap: Tap): number[] {
  if (this._readerType !== undefined) return readArray.call(this, tap) as number[];
  const buf = tap.buf;
  let value: number[] | undefined;
  let i = 0;
  let n: number;
  while ((n = readCount(tap))) {
    const pos = tap.pos;
    if (n * 4 > buf.length - pos) {
      tap.pos = buf.length + 1; // fewer bytes than the floats need: truncated
      return [];
    }
    const scratch = floatScratch(n);
    floatBytes.set(buf.subarray(pos, pos + 4 * n));
    value ??= new Array(n);
    for (let j = 0; j < n; j++) value[i++] = scratch[j]!;
    tap.pos = pos + 4 * n;
  }
  return value ?? [];
}

export function writeFloatArray(this: ArrayLike, tap: Tap, value: unknown): void {
  if (!Array.isArray(value)) throw new TypeError('invalid array');
  const n = value.length;
  if (n > 0) {
    tap.writeLong(n);
    const scratch = floatScratch(n);
    for (let i = 0; i < n; i++) {
      const v = value[i];
      if (typeof v !== 'number') throw new TypeError(`invalid "float": ${v}`);
      scratch[i] = v;
    }
    const pos = tap.pos;
    // Past the end of buf nothing is written, only counted: encode then retries with a bigger buffer.
    if (pos + 4 * n <= tap.buf.length) tap.buf.set(floatBytes.subarray(0, 4 * n), pos);
    tap.pos = pos + 4 * n;
  }
  tap.writeLong(0);
}
