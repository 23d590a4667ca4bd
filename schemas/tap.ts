// avsc's Tap: the one internal the fast Avro paths (avro-arrays, avro-strings, avro-tap) share, in a file of
// its own so they can share it without importing each other.
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
