// RowBinary encoding of sink rows: byte layout per type (lengths as LEB128, little-endian numbers, Nullable
// flag byte, Enum codes), strings byte for byte (tabs, newlines, backslashes, quotes, unicode, raw Buffers),
// "nan"/"inf" floats, and rejection of values the column cannot hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteWriter, rowBinaryEncoder, typeWriter } from '../../../storage/sink/row-binary.js';
import type { Cell } from '../../../storage/sink/rows.js';

function bytesOf(type: string, value: Cell): Buffer {
  const write = typeWriter(type);
  assert.ok(write, `${type} is supported`);
  const w = new ByteWriter(4);
  write(w, value, 'c');
  return Buffer.from(w.result());
}

const hex = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p.replace(/ /g, ''), 'hex') : p)));

test('strings: length prefix, then the UTF-8 bytes unchanged (no escaping in RowBinary)', () => {
  for (const s of ['', 'a', 'tab\there', 'new\nline\r', 'back\\slash \'quote\' "dq"', '\0nul', 'héllo ✓ 𝄞', 'x'.repeat(127), 'x'.repeat(128), 'é'.repeat(100)]) {
    const utf8 = Buffer.from(s, 'utf8');
    const length = utf8.length < 0x80 ? Buffer.from([utf8.length]) : Buffer.from([(utf8.length & 0x7f) | 0x80, utf8.length >> 7]);
    assert.deepEqual(bytesOf('String', s), Buffer.concat([length, utf8]), JSON.stringify(s));
  }
  // A Buffer is raw bytes (dead letters' payloads), including bytes ≥ 0x80 that are not UTF-8.
  assert.deepEqual(bytesOf('String', Buffer.from([0xff, 0x00, 0x09, 0x80])), hex('04 ff 00 09 80'));
  assert.deepEqual(bytesOf('String', 'y'.repeat(300)).subarray(0, 2), hex('ac 02'));
});

test("integers: fixed width, little endian, two's complement; 64-bit from safe integers", () => {
  assert.deepEqual(bytesOf('UInt8', 1), hex('01'));
  assert.deepEqual(bytesOf('Int32', -2), hex('fe ff ff ff'));
  assert.deepEqual(bytesOf('UInt32', 0xdeadbeef), hex('ef be ad de'));
  assert.deepEqual(bytesOf('Int64', 1_700_000_000_123), Buffer.from(new BigInt64Array([1_700_000_000_123n]).buffer));
  assert.deepEqual(bytesOf('Int64', -5), hex('fb ff ff ff ff ff ff ff'));
  assert.deepEqual(bytesOf('Int64', Number.MAX_SAFE_INTEGER), Buffer.from(new BigInt64Array([BigInt(Number.MAX_SAFE_INTEGER)]).buffer));
  assert.deepEqual(bytesOf('Int64', Number.MIN_SAFE_INTEGER), Buffer.from(new BigInt64Array([BigInt(Number.MIN_SAFE_INTEGER)]).buffer));
  assert.deepEqual(bytesOf('Int16', -1), hex('ff ff'));
});

test('values a column cannot hold are a mapping bug: thrown, never wrapped', () => {
  assert.throws(() => bytesOf('UInt8', 256), TypeError);
  assert.throws(() => bytesOf('UInt32', -1), TypeError);
  assert.throws(() => bytesOf('Int32', 1.5), TypeError);
  assert.throws(() => bytesOf('Int64', 2 ** 60), TypeError);
  assert.throws(() => bytesOf('Int32', '7'), TypeError);
  assert.throws(() => bytesOf('String', 7), TypeError);
  assert.throws(() => bytesOf('Float64', 'NaN'), TypeError);
  assert.throws(() => bytesOf('Array(Int32)', [1, 2.5]), TypeError);
  assert.throws(() => bytesOf('Array(Int32)', 'x'), TypeError);
  assert.throws(() => bytesOf("Enum8('a' = 1)", 'b'), TypeError);
});

test('floats: IEEE little endian; "nan"/"inf"/"-inf" (rows.ts spelling) are those floats', () => {
  const f64 = (x: number) => Buffer.from(new Float64Array([x]).buffer);
  const f32 = (...xs: number[]) => Buffer.from(new Float32Array(xs).buffer);
  assert.deepEqual(bytesOf('Float64', 0.1), f64(0.1));
  assert.deepEqual(bytesOf('Float64', 'nan'), f64(NaN));
  assert.deepEqual(bytesOf('Float64', '-inf'), f64(-Infinity));
  assert.deepEqual(bytesOf('Float32', Math.fround(-0.25)), f32(-0.25));
  assert.deepEqual(bytesOf('Array(Float32)', [-0.5, 'inf', 'nan', 1]), Buffer.concat([hex('04'), f32(-0.5, Infinity, NaN, 1)]));
  assert.deepEqual(bytesOf('Array(Float64)', []), hex('00'));
});

test('arrays, nullables, enums, low cardinality', () => {
  assert.deepEqual(bytesOf('Array(Int32)', [1, -1]), hex('02 01000000 ffffffff'));
  assert.deepEqual(bytesOf('Array(UInt8)', [0, 1, 1]), hex('03 00 01 01'));
  assert.deepEqual(bytesOf('Array(String)', ["a'b", 'c\td']), hex('02 03', Buffer.from("a'b"), '03', Buffer.from('c\td')));
  assert.deepEqual(bytesOf('Nullable(String)', null), hex('01'));
  assert.deepEqual(bytesOf('Nullable(String)', 'x'), hex('00 01 78'));
  assert.deepEqual(bytesOf('Nullable(Int64)', 3), hex('00 03 00 00 00 00 00 00 00'));
  assert.deepEqual(bytesOf('Nullable(Float64)', null), hex('01'));
  assert.deepEqual(bytesOf("Enum8('terminated' = 1, 'truncated' = 2, 'incomplete' = 3)", 'truncated'), hex('02'));
  assert.deepEqual(bytesOf("Enum8('it\\'s' = -1, 'a, b' = 5)", "it's"), hex('ff'));
  assert.deepEqual(bytesOf("Enum8('it\\'s' = -1, 'a, b' = 5)", 'a, b'), hex('05'));
  assert.deepEqual(bytesOf('LowCardinality(String)', 'ab'), hex('02 61 62'));
});

test('unknown types give no writer, and an encoder over them none: the caller falls back to JSONEachRow', () => {
  for (const type of ['DateTime', 'Decimal(10, 2)', 'Array(DateTime)', 'Nullable(UUID)', 'Map(String, String)', 'Tuple(Int32, String)']) {
    assert.equal(typeWriter(type), null, type);
  }
  assert.equal(
    rowBinaryEncoder(
      ['a', 'b'],
      new Map([
        ['a', 'String'],
        ['b', 'DateTime'],
      ]),
    ),
    null,
  );
  assert.equal(rowBinaryEncoder(['a', 'missing'], new Map([['a', 'String']])), null);
});

test('an encoder writes rows column by column in the given order, and a missing value throws', () => {
  const encoder = rowBinaryEncoder(
    ['id', 'n', 'xs'],
    new Map([
      ['xs', 'Array(Int32)'],
      ['n', 'Nullable(Int64)'],
      ['id', 'String'],
    ]),
  )!;
  const body = encoder.encode([
    { xs: [7], n: null, id: 'a' },
    { id: 'b', n: 2, xs: [] },
  ]);
  assert.deepEqual(body, hex('01 61 01 01 07000000', '01 62 00 0200000000000000 00'));
  assert.throws(() => encoder.encode([{ id: 'a', xs: [] }]), /no value for column n/);
  // Large batches grow the buffer without losing bytes.
  const many = encoder.encode(Array.from({ length: 5000 }, (_, i) => ({ id: `row-${i}`, n: i, xs: [i, i + 1] })));
  assert.equal(many.length, 5000 * (1 + 0) + [...Array(5000).keys()].reduce((sum, i) => sum + `row-${i}`.length, 0) + 5000 * (1 + 8 + 1 + 8));
});
