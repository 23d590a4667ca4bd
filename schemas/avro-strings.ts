// Fast strings for the avsc types trajflow builds. A string is a zigzag varint byte length, then
// UTF-8 bytes (spec, "Primitive Types").
//
// Writing: avsc measures every string with Buffer.byteLength first, which costs as much as the write
// for the short ids that fill our events. Most strings are ASCII, whose UTF-8 length is their JS
// length, so we write the length prefix optimistically and fall back to avsc's path at the first
// non-ASCII character.
//
// Reading: the short strings of an event repeat from event to event (run id, env name, group id,
// map keys ...), and a native utf8Slice call costs several times more than comparing a few bytes in
// JS. So short strings go through a small direct-mapped cache keyed by their bytes: a hit returns the
// string decoded earlier from the same bytes (strings are immutable, so sharing is invisible).
import type { Tap } from './tap.js';

interface StringTap extends Tap {
  writeString(s: string): void;
}

// Buffer#utf8Write/utf8Slice are Node's undocumented fast paths behind write/toString (avsc uses them).
type Utf8Buffer = Buffer & { utf8Write(s: string, offset: number): number; utf8Slice(start: number, end: number): string };

const CACHE_SLOTS = 1024; // a power of 2
const CACHED_MAX_BYTES = 32;
const cachedBytes: (Uint8Array | undefined)[] = new Array(CACHE_SLOTS).fill(undefined);
const cachedStrings: string[] = new Array(CACHE_SLOTS).fill('');

/** Reads an Avro string at tap.pos. */
export function readStringCached(tap: Tap): string {
  const len = tap.readLong();
  const buf = tap.buf as Utf8Buffer;
  const pos = tap.pos;
  const end = pos + len;
  if (len < 0 || end > buf.length) {
    tap.pos = buf.length + 1; // a negative or too long length: decode reports the datum truncated
    return '';
  }
  tap.pos = end;
  if (len > CACHED_MAX_BYTES) return buf.utf8Slice(pos, end);
  let h = len;
  for (let i = pos; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193); // FNV-1a
  const slot = (h ^ (h >>> 15)) & (CACHE_SLOTS - 1);
  const cached = cachedBytes[slot];
  if (cached !== undefined && cached.length === len) {
    let i = 0;
    while (i < len && cached[i] === buf[pos + i]) i++;
    if (i === len) return cachedStrings[slot]!;
  }
  const s = buf.utf8Slice(pos, end);
  const copy = new Uint8Array(len); // a plain loop: Buffer#slice and subarray go through the slow species path
  for (let i = 0; i < len; i++) copy[i] = buf[pos + i]!;
  cachedBytes[slot] = copy;
  cachedStrings[slot] = s;
  return s;
}

export function readString(this: unknown, tap: Tap): string {
  return readStringCached(tap);
}

/** Writes s as an Avro string at tap.pos (writes past the end are dropped and only counted). */
export function writeStringFast(tap: StringTap, s: string): void {
  const len = s.length;
  const buf = tap.buf;
  const pos = tap.pos;
  if (len < 64) {
    buf[pos] = len << 1; // zigzag(len) < 128: a one-byte varint
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        tap.writeString(s); // avsc's path rewrites from pos
        return;
      }
      buf[pos + 1 + i] = c;
    }
    tap.pos = pos + 1 + len;
    return;
  }
  if (len < 8192 && pos + 2 + 3 * len <= buf.length) {
    // zigzag(len) < 16384: a two-byte varint. utf8Write wrote len bytes only if every char was ASCII.
    if ((buf as Utf8Buffer).utf8Write(s, pos + 2) === len) {
      buf[pos] = ((len << 1) & 0x7f) | 0x80;
      buf[pos + 1] = len >> 6;
      tap.pos = pos + 2 + len;
      return;
    }
  }
  tap.writeString(s);
}

export function writeString(this: unknown, tap: StringTap, value: unknown): void {
  if (typeof value !== 'string') throw new TypeError(`invalid "string": ${String(value)}`);
  writeStringFast(tap, value);
}

interface MapTypeLike {
  valuesType: { _write(tap: Tap, value: unknown): void };
}

export function writeMap(this: MapTypeLike, tap: StringTap, value: unknown): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new TypeError('invalid map');
  const values = this.valuesType;
  const keys = Object.keys(value);
  const n = keys.length;
  if (n > 0) {
    tap.writeLong(n);
    for (let i = 0; i < n; i++) {
      const key = keys[i]!;
      writeStringFast(tap, key);
      values._write(tap, (value as Record<string, unknown>)[key]);
    }
  }
  tap.writeLong(0);
}
