// Unit: the speed patches scripts/patch-kafkajs.mjs applies to kafkajs 2.2.4 at install — the record batch
// CRC-32C computed slicing-by-8 and the protocol Encoder allocating with allocUnsafe — are in place and give
// the same bytes as kafkajs' own byte-at-a-time CRC and zero-filled buffers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Rng } from '../../envs/random.js';

const require = createRequire(import.meta.url);
const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;
const Encoder = require('kafkajs/src/protocol/encoder.js') as new () => {
  writeInt32(value: number): unknown;
  writeVarIntString(value: string): unknown;
  writeBytes(value: Buffer): unknown;
  buffer: Buffer;
};

/** kafkajs' shipped algorithm: one table lookup per byte. */
function referenceCrc32C(buffer: Buffer): number {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c;
  }
  let crc = -1;
  for (const byte of buffer) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

test('the patched CRC-32C gives the standard check value and the byte-at-a-time result at every length', () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js'), 'utf8'), /slicing-by-8/);
  assert.equal(crc32C(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32C(Buffer.alloc(0)), 0);
  const rng = new Rng(7);
  for (const length of [1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099]) {
    const buffer = Buffer.from(Array.from({ length }, () => Math.floor(rng.next() * 256)));
    assert.equal(crc32C(buffer), referenceCrc32C(buffer), `length ${length}`);
    // an unaligned view into a larger buffer
    const view = Buffer.concat([Buffer.from([1, 2, 3]), buffer]).subarray(3);
    assert.equal(crc32C(view), referenceCrc32C(buffer), `offset view, length ${length}`);
  }
});

test('the patched Encoder allocates with allocUnsafe and still exposes exactly the bytes written, across growth', () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/encoder.js'), 'utf8'), /Buffer\.allocUnsafe\(newLength\)/);
  const payload = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
  const encoder = new Encoder();
  encoder.writeInt32(258);
  encoder.writeVarIntString('abc');
  encoder.writeBytes(payload);
  const expected = Buffer.concat([Buffer.from([0, 0, 1, 2]), Buffer.from([6, 97, 98, 99]), Buffer.from([0, 0, 0x0b, 0xb8]), payload]);
  assert.deepEqual(encoder.buffer, expected);
});

test('a record batch encoded with the patched encoder and CRC decodes to the same records, with a valid CRC', async () => {
  const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (args: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (args: Record<string, unknown>) => unknown;
  const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: unknown) => Promise<{ records: { key: Buffer; value: Buffer; headers: Record<string, Buffer> }[] }>;
  const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;
  const values = [Buffer.alloc(0), Buffer.from('x'), Buffer.alloc(1500, 7), Buffer.alloc(5000, 9)];
  const records = values.map((value, offsetDelta) => Record({ offsetDelta, key: Buffer.from(`k${offsetDelta}`), value, headers: { h: 'v' } }));
  const { buffer } = await RecordBatch({ records, firstOffset: 0, firstTimestamp: 1, maxTimestamp: 1, lastOffsetDelta: values.length - 1 });
  const decoded = await decodeBatch(new Decoder(buffer));
  assert.deepEqual(decoded.records.map((r) => [r.key.toString(), Buffer.compare(r.value, values[Number(r.key.toString().slice(1))]!), r.headers.h!.toString()]), values.map((_, i) => [`k${i}`, 0, 'v']));
  // The decoder checked nothing about the CRC: check it against the bytes it covers (attributes → end).
  const crc = buffer.readUInt32BE(8 + 4 + 4 + 1);
  assert.equal(crc, crc32C(buffer.subarray(8 + 4 + 4 + 1 + 4)));
});
