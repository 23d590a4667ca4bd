// avsc's Tap, a buffer and a position with Avro's primitive reads and writes, which avsc 5.7 does not export
// from its entry point: its interface, shared by the fast Avro paths (avro-arrays, avro-strings) and the wire
// paths (wire-step, wire-writer), and a constructor for it. The file imports no other module of schemas/, so
// all of them can use it without importing each other.
import { createRequire } from 'node:module';

/** avsc 5.7's reading and writing cursor over a buffer (the internals the fast paths use). */
export interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
  writeLong(n: number): void;
  readString(): string;
  skipString(): void;
}

export interface WritableTap extends Tap {
  isValid(): boolean;
  writeString(s: string): void;
}

const { Tap: TapClass } = createRequire(import.meta.url)('avsc/lib/utils.js') as { Tap: new (buf: Buffer, pos: number) => WritableTap };

export function tapAt(buf: Buffer, pos: number): WritableTap {
  return new TapClass(buf, pos);
}
