// CRC-64-AVRO, the 64-bit Rabin fingerprint of the Avro specification ("Schema Fingerprints"):
// fingerprint64(buf) starts at EMPTY and folds each byte through a 256-entry table built from EMPTY.
// The single-object header carries it little-endian ("Single object encoding").
// BigInt is slow next to 32-bit arithmetic, but fingerprints are taken once per schema, never per event.

/** The spec's EMPTY constant, which is also the fingerprint of no bytes. */
export const EMPTY = 0xc15d213aa4d7a795n;

const TABLE: BigUint64Array = (() => {
  const table = new BigUint64Array(256);
  for (let i = 0; i < 256; i++) {
    let fp = BigInt(i);
    for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n));
    table[i] = fp;
  }
  return table;
})();

/** CRC-64-AVRO of bytes, or of a string's UTF-8 bytes (pass a schema's Parsing Canonical Form). */
export function crc64Avro(data: Uint8Array | string): bigint {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let fp = EMPTY;
  for (const byte of bytes) fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(byte)) & 0xffn)]!;
  return fp;
}

/** The 8 bytes of a fingerprint as written in the single-object header (little-endian). */
export function fingerprintBytes(fingerprint: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(fingerprint);
  return bytes;
}

/** A fingerprint as 16 hex digits, most significant first (how the spec prints 0x7275d51a3f395c8f). */
export function fingerprintHex(fingerprint: bigint): string {
  return fingerprint.toString(16).padStart(16, '0');
}

/** Parses 16 hex digits (most significant first) back into a fingerprint. */
export function parseFingerprintHex(hex: string): bigint {
  if (!/^[0-9a-fA-F]{16}$/.test(hex)) throw new RangeError(`a fingerprint is 16 hex digits, got '${hex}'`);
  return BigInt(`0x${hex}`);
}

/** The signed 64-bit reading of a fingerprint, as Java's SchemaNormalization.parsingFingerprint64 returns it. */
export function fingerprintToSigned(fingerprint: bigint): bigint {
  return BigInt.asIntN(64, fingerprint);
}
