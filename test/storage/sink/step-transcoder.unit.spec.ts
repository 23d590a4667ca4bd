// unit: the step transcoder (Avro bytes → RowBinary steps row) against the decoding path it short-cuts
// (eventDecoder → stepRows → rowBinaryEncoder): the same bytes for every step it accepts, and it accepts
// nothing the decoding path rejects (corrupted events, fuzzed byte by byte).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { listMigrations, splitStatements } from '../../../infra/clickhouse/migrations.js';
import { ByteWriter, rowBinaryEncoder } from '../../../storage/sink/row-binary.js';
import { stepRows, type KafkaSource } from '../../../storage/sink/rows.js';
import { STEP_COLUMN_TYPES, STEP_COLUMNS, StepChunks, stepTypesMatch, transcodeStep } from '../../../storage/sink/step-transcoder.js';
import { STEP_WALK_WASM_BASE64 } from '../../../storage/sink/step-walk.wasm.js';
import { compiledKernel } from '../../../scripts/build-wasm-kernels.mjs';
import { eventDecoder } from '../../../streams/event-consumer.js';
import type { StepEvent } from '../../../schemas/index.js';
import { codec } from '../../schemas/helpers.js';
import { makeStep, rng, sampleEvents } from '../../../bench/load/events.js';

const source: KafkaSource = { topic: 'trajflow.env.steps', partition: 3, offset: '9007199254740' };
const header = codec.registry.current('step').header;
const decode = eventDecoder(codec, 'step');
const encoder = rowBinaryEncoder(STEP_COLUMNS, STEP_COLUMN_TYPES)!;

/** The decoding path's bytes for a payload, or null when it rejects it. */
function decodedRow(bytes: Buffer): Buffer | null {
  let step: StepEvent;
  try {
    step = decode(bytes);
  } catch {
    return null;
  }
  return Buffer.from(encoder.encode([stepRows(step, source)[0]!.row]));
}

/** The transcoder's row, or null when it declines (and then it must have written nothing). */
function transcoded(bytes: Buffer, maxEventBytes = codec.maxEventBytes): Buffer | null {
  const w = new ByteWriter(16);
  w.stringBytes(Buffer.from('before'), 0, 6);
  const before = w.pos;
  if (!transcodeStep(w, bytes, source, header, maxEventBytes)) {
    assert.equal(w.pos, before, 'a declined step leaves the writer as it was');
    return null;
  }
  return Buffer.from(w.result().subarray(before));
}

test('the committed walk bytes are step-walk.as.ts compiled (else: node scripts/build-wasm-kernels.mjs)', async () => {
  assert.ok((await compiledKernel('STEP_WALK_WASM_BASE64')) === STEP_WALK_WASM_BASE64, 'storage/sink/step-walk.wasm.ts is stale: run node scripts/build-wasm-kernels.mjs');
});

test("the columns are stepRows' keys in order, and the types those of the steps migration", () => {
  assert.deepEqual(STEP_COLUMNS, Object.keys(stepRows(makeStep(), source)[0]!.row));
  const create = listMigrations()
    .flatMap((m) => splitStatements(readFileSync(m.file, 'utf8')))
    .find((s) => s.startsWith('CREATE TABLE IF NOT EXISTS steps ('))!;
  const types = new Map(
    create
      .slice(create.indexOf('(') + 1, create.indexOf(') ENGINE'))
      .split('\n')
      .map((line) => line.trim().replace(/,$/, ''))
      .filter((line) => line !== '')
      .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)] as [string, string]),
  );
  assert.deepEqual(types, STEP_COLUMN_TYPES);
  assert.equal(stepTypesMatch(types), true);
  assert.equal(stepTypesMatch(new Map([...types, ['event_id', 'LowCardinality(String)']])), true);
  assert.equal(stepTypesMatch(new Map([...types, ['reward', 'Float32']])), false);
  assert.equal(stepTypesMatch(new Map([...types].filter(([c]) => c !== 'kafka_offset'))), false);
});

const variants: Record<string, Partial<StepEvent>> = {
  plain: {},
  'no observation tokens, no state key, empty maps': { observationTokenIds: null, stateKey: null, metrics: {}, info: {} },
  'empty action': { action: '', actionTokenIds: [], actionLogProbs: [], observation: '' },
  unicode: { observation: 'héllo ✓ 𝄞\n\t"quoted"', action: '<answer>↑</answer>', info: { note: 'naïve ✓', z: '' }, stateKey: 'état=1' },
  'non-finite and signed-zero metrics': { metrics: { nan: NaN, inf: Infinity, ninf: -Infinity, zero: -0, big: 1e308 }, reward: -0 },
  'many map entries, sorted by key': {
    metrics: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`m${(i * 7) % 40}`, i / 3])),
    info: { b: '2', a: '1', '10': 'x', '9': 'y' },
  },
  'integer-like keys (Object.keys would list them first)': { metrics: { '2': 2, '10': 10, a: 1 } },
  extremes: {
    stepIndex: 0x7fff_ffff,
    policyVersion: 2 ** 52,
    eventTimeMs: 253_402_300_799_999,
    actionTokenIds: [0, 0x7fff_ffff, 127, 128, 16384],
    actionLogProbs: [0, -0, -1e-30, -3.4e38, -1],
  },
  'long observation': { observation: 'x'.repeat(70_000), observationTokenIds: Array.from({ length: 5000 }, (_, i) => i * 401) },
};

for (const [name, overrides] of Object.entries(variants)) {
  test(`same bytes as the decoding path: ${name}`, () => {
    for (let seed = 0; seed < 20; seed++) {
      const bytes = codec.encode('step', makeStep(overrides, seed));
      const expected = decodedRow(bytes);
      assert.ok(expected, 'the decoding path accepts it');
      assert.deepEqual(transcoded(bytes), expected);
    }
  });
}

/** The datum of a step as avsc would write it, with the arrays split into blocks (one with a byte size). */
function multiBlock(step: StepEvent): Buffer {
  const plain = codec.encode('step', step);
  const zig = (n: number) => {
    const out: number[] = [];
    let z = n >= 0 ? 2 * n : -2 * n - 1;
    while (z >= 0x80) {
      out.push((z & 0x7f) | 0x80);
      z = Math.floor(z / 128);
    }
    out.push(z);
    return Buffer.from(out);
  };
  const ints = (xs: number[]) => Buffer.concat(xs.map(zig));
  const floats = (xs: number[]) =>
    Buffer.concat(
      xs.map((x) => {
        const b = Buffer.alloc(4);
        b.writeFloatLE(x);
        return b;
      }),
    );
  // actionTokenIds [5, 6, 7] in blocks [5] and [6, 7] (the second with its byte size); log-probs likewise.
  const tokens = Buffer.concat([zig(1), ints([5]), zig(-2), zig(2), ints([6, 7]), zig(0)]);
  const lps = Buffer.concat([zig(2), floats([-1, -2]), zig(-1), zig(4), floats([-3]), zig(0)]);
  const single = codec.encode('step', { ...step, actionTokenIds: [5, 6, 7], actionLogProbs: [-1, -2, -3] });
  const singleTokens = Buffer.concat([zig(3), ints([5, 6, 7]), zig(0)]);
  const singleLps = Buffer.concat([zig(3), floats([-1, -2, -3]), zig(0)]);
  const at = single.indexOf(Buffer.concat([singleTokens, singleLps]));
  assert.ok(at > 0 && plain.length > 0);
  return Buffer.concat([single.subarray(0, at), tokens, lps, single.subarray(at + singleTokens.length + singleLps.length)]);
}

test('arrays in several blocks (negative counts with byte sizes) give the same bytes', () => {
  const bytes = multiBlock(makeStep({}, 3));
  const expected = decodedRow(bytes);
  assert.ok(expected);
  assert.deepEqual(decode(bytes).actionTokenIds, [5, 6, 7]);
  assert.deepEqual(transcoded(bytes), expected);
});

test('declined (false) where the decoding path decides: other schema, invalid values, odd encodings', () => {
  const step = makeStep({}, 5);
  const good = codec.encode('step', step);
  assert.ok(transcoded(good));
  // Invalid values: the decoding path rejects them, with the reason the dead letter gets.
  for (const bad of [
    { eventId: '' },
    { stepIndex: -1 },
    { actionLogProbs: step.actionLogProbs.map(() => 0.5) },
    { actionTokenIds: [...step.actionTokenIds, 1] },
    { reward: NaN },
    { policyVersion: -3 },
    { stateKey: '' },
    { eventTimeMs: 0 },
    { eventTimeMs: 253_402_300_800_000 },
    { observationTokenIds: [-1] },
  ]) {
    const bytes = codec.encode('step', { ...step, ...bad } as StepEvent);
    assert.equal(decodedRow(bytes), null, JSON.stringify(bad));
    assert.equal(transcoded(bytes), null, JSON.stringify(bad));
  }
  // Another event kind, a bad header, trailing bytes, a cut datum, too large an event.
  assert.equal(transcoded(codec.encode('policy_version', sampleEvents.policy_version)), null);
  assert.equal(transcoded(Buffer.concat([good, Buffer.from([0])])), null);
  assert.equal(transcoded(good.subarray(0, good.length - 1)), null);
  assert.equal(transcoded(good, good.length - 1), null);
  // Accepted by the decoding path, declined here: a boolean byte of 2 (avsc reads it as true).
  const flags = (t: boolean) => codec.encode('step', { ...step, terminated: t, truncated: false, actionValid: false });
  const f0 = flags(false);
  const f1 = flags(true);
  const diff = [...f0].findIndex((b, i) => b !== f1[i]);
  const two = Buffer.from(f1);
  two[diff] = 2;
  assert.ok(decodedRow(two), 'avsc accepts a boolean byte of 2');
  assert.equal(transcoded(two), null);
});

test("fuzz: corrupted steps are either declined or give exactly the decoding path's bytes", () => {
  const random = rng(7);
  let accepted = 0;
  let declined = 0;
  let declinedOtherwise = 0;
  for (let i = 0; i < 4000; i++) {
    const bytes = Buffer.from(codec.encode('step', makeStep({}, i % 50)));
    const edits = 1 + Math.floor(random() * 3);
    for (let e = 0; e < edits; e++) {
      // Mostly in the datum (the header only ever leads to a decline).
      const at = 10 + Math.floor(random() * (bytes.length - 10));
      const r = random();
      if (r < 0.6) bytes[at] = Math.floor(random() * 256);
      else if (r < 0.8) bytes[at] = bytes[at]! ^ (1 << Math.floor(random() * 8));
      else bytes[at] = bytes[at]! + (random() < 0.5 ? 1 : -1);
    }
    const fast = transcoded(bytes);
    const slow = decodedRow(bytes);
    if (fast) {
      accepted++;
      assert.deepEqual(fast, slow, `case ${i}: accepted bytes the decoding path ${slow ? 'writes otherwise' : 'rejects'}`);
    } else {
      declined++;
      // Decodable yet declined: nearly always a string made invalid UTF-8 (avsc decodes it with U+FFFD, so
      // the row is not the event's bytes); otherwise a boolean byte above 1.
      if (slow && !JSON.stringify(decode(bytes)).includes('\ufffd')) declinedOtherwise++;
    }
  }
  // Both outcomes happen (the fuzz reaches past the first field), and the fast way declines little else.
  assert.ok(accepted > 500 && declined > 500, `accepted ${accepted}, declined ${declined}`);
  assert.ok(declinedOtherwise < 50, `declined ${declinedOtherwise} decodable steps with valid UTF-8 (accepted ${accepted})`);
});

test('crafted datums no encoder writes: a NaN with a payload, a duplicate key, "__proto__", a time past year 9999 and a long past 2^53', () => {
  const step = makeStep({ metrics: { aa: 1, ab: 2 }, info: {} }, 4);
  const plain = codec.encode('step', step);
  // A negative NaN with a payload: the decoding path writes the canonical NaN.
  const nan = Buffer.from(plain);
  const one = Buffer.alloc(8);
  one.writeDoubleLE(1);
  const at = nan.indexOf(one);
  nan.writeBigUInt64LE(0xfff8_0000_0000_0001n, at);
  assert.ok(decodedRow(nan));
  assert.deepEqual(transcoded(nan), decodedRow(nan));
  // A key twice (the decoding path keeps the last value): declined.
  const duplicate = Buffer.from(plain);
  duplicate.write('aa', duplicate.indexOf('ab'), 'latin1');
  assert.equal(transcoded(duplicate), null);
  // "__proto__" (not an own key of the object avsc builds): declined.
  const proto = codec.encode('step', { ...step, metrics: { ['__proto__']: 1, a: 2 } });
  assert.equal(transcoded(proto), null);
  // eventTimeMs (the last field) as 2^54, an 8-byte varint: beyond a safe integer, declined.
  const time = codec.encode('step', { ...step, eventTimeMs: 2 ** 52 });
  const tail = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]); // zigzag(2^52) = 2^53: 8 bytes
  assert.deepEqual(time.subarray(time.length - 8), tail);
  // 2^52 ms is past 9999-12-31 (the last time every consumer can decode): declined here as on the decoding path.
  assert.equal(decodedRow(time), null, 'the decoding path refuses 2^52');
  assert.equal(transcoded(time), null, '2^52 is declined');
  const past = Buffer.from(time);
  past[past.length - 1] = 0x40; // zigzag(2^54) = 2^55: past the limit
  assert.equal(transcoded(past), null);
});

test("UTF-8: a string is accepted exactly when node's isUtf8 accepts its bytes (overlong forms, surrogates, > U+10FFFF, cut sequences)", () => {
  const random = rng(11);
  // Strings of 1–8 units: mostly a code point at an edge of UTF-8's ranges, encoded, sometimes a lone byte
  // from the edges of the lead and continuation ranges; so about half the strings are valid, and the invalid
  // ones fail in every way (overlong forms, surrogates, above U+10FFFF, cut or stray continuation bytes).
  const codePoints = [0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xfff, 0x1000, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff];
  const bytesOf = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff];
  // Sequences just inside and just outside each range (surrogates, overlong forms, above U+10FFFF, cut).
  const sequences = [
    [0xed, 0x9f, 0xbf],
    [0xed, 0xa0, 0x80],
    [0xed, 0xbf, 0xbf],
    [0xee, 0x80, 0x80],
    [0xe0, 0xa0, 0x80],
    [0xe0, 0x9f, 0xbf],
    [0xc1, 0xbf],
    [0xc2, 0x80],
    [0xf0, 0x90, 0x80, 0x80],
    [0xf0, 0x8f, 0xbf, 0xbf],
    [0xf4, 0x8f, 0xbf, 0xbf],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf5, 0x80, 0x80, 0x80],
    [0xe1, 0x80],
    [0xf1, 0x80, 0x80],
  ];
  const placeholder = 'Q'.repeat(40);
  // The info value is followed by the next key's length, 64 → the byte 0x80: a sequence cut at the string's end
  // must not take it as its continuation.
  const template = codec.encode('step', makeStep({ action: placeholder, info: { note: placeholder, ['k'.repeat(64)]: 'v' } }, 2));
  let valid = 0;
  let invalid = 0;
  for (let i = 0; i < 6000; i++) {
    const units = 1 + Math.floor(random() * 8);
    const parts: Buffer[] = [];
    for (let u = 0; u < units; u++) {
      const r = random();
      if (r < 0.08) parts.push(Buffer.from([bytesOf[Math.floor(random() * bytesOf.length)]!]));
      else if (r < 0.16) parts.push(Buffer.from(sequences[Math.floor(random() * sequences.length)]!));
      else parts.push(Buffer.from(String.fromCodePoint(random() < 0.8 ? codePoints[Math.floor(random() * codePoints.length)]! : Math.floor(random() * 0x110000))));
    }
    // Up to 8 units of up to 4 bytes: lengths also past 8 (the walk checks 8 ASCII bytes at a time).
    const text = Buffer.concat(parts);
    const length = text.length;
    const bytes = Buffer.from(template);
    const at = random() < 0.5 ? bytes.indexOf(placeholder) : bytes.lastIndexOf(placeholder);
    text.copy(bytes, at);
    bytes[at - 1] = 2 * length; // the string's length prefix (a one-byte zigzag varint)
    const spliced = Buffer.concat([bytes.subarray(0, at + length), bytes.subarray(at + placeholder.length)]);
    const expected = isUtf8(text) ? decodedRow(spliced) : null;
    if (isUtf8(text)) assert.ok(expected, 'the decoding path takes valid UTF-8');
    assert.deepEqual(transcoded(spliced), expected, `bytes ${text.toString('hex')}`);
    if (expected) valid++;
    else invalid++;
  }
  assert.ok(valid > 500 && invalid > 500, `valid ${valid}, invalid ${invalid}`);
});

test('StepChunks: rows side by side in a chunk, a new chunk past 1 MiB, declined steps leave no trace', () => {
  const chunks = new StepChunks(header, codec.maxEventBytes);
  const rows = Array.from({ length: 3000 }, (_, i) => {
    const bytes = codec.encode('step', makeStep({ observation: 'o'.repeat(400) }, i));
    return chunks.transcode(bytes, { ...source, offset: String(i) })!;
  });
  assert.equal(chunks.transcode(codec.encode('step', { ...makeStep({}, 1), stepIndex: -1 }), source), null);
  const next = chunks.transcode(codec.encode('step', makeStep({}, 1)), source)!;
  const used = new Set(rows.map((r) => r.chunk));
  assert.ok(used.size >= 2, `${used.size} chunks for ≈ 1.6 MB of rows`);
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1]!, rows[i]!];
    if (a.chunk === b.chunk) assert.equal(b.start, a.end, 'rows follow each other');
    else assert.equal(b.start, 0);
  }
  const last = rows.at(-1)!;
  assert.equal(next.start, next.chunk === last.chunk ? last.end : 0, 'the declined step wrote nothing');
  for (const i of [0, 1234, 2999]) {
    const row = rows[i]!;
    const bytes = codec.encode('step', makeStep({ observation: 'o'.repeat(400) }, i));
    const expected = encoder.encode([stepRows(decode(bytes), { ...source, offset: String(i) })[0]!.row]);
    const w = new ByteWriter(16);
    w.rangeOf(row.chunk, row.start, row.end);
    assert.deepEqual(Buffer.from(w.result()), Buffer.from(expected));
  }
});
