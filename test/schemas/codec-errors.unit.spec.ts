import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DecodeError, EventCodec, type DecodeFailure } from '../../schemas/index.js';
import { makeStep, sampleEvents } from '../../bench/load/events.js';
import { codec, registry } from './helpers.js';

function decodeFails(bytes: Buffer, reason: DecodeFailure | DecodeFailure[], pattern?: RegExp, decoder: EventCodec = codec): void {
  const reasons = Array.isArray(reason) ? reason : [reason];
  assert.throws(
    () => decoder.decode('step', bytes),
    (e: unknown) => {
      assert.ok(e instanceof DecodeError, `expected a DecodeError, got ${String(e)}`);
      assert.ok(reasons.includes(e.reason), `reason ${e.reason} (${e.message}), expected ${reasons.join(' or ')}`);
      assert.equal(e.retriable, false);
      if (pattern) assert.match(e.message, pattern);
      return true;
    },
  );
}

const step = codec.encode('step', makeStep({ observationTokenIds: [1, 2, 3], metrics: { a: 1 } }));

describe('DecodeError reasons', () => {
  test('bad-marker: wrong first bytes, or nothing at all', () => {
    decodeFails(Buffer.concat([Buffer.from([0xc3, 0x02]), step.subarray(2)]), 'bad-marker', /c302/);
    decodeFails(Buffer.from('{"eventId":"x"}'), 'bad-marker');
    decodeFails(Buffer.alloc(0), 'bad-marker', /nothing/);
    decodeFails(Buffer.from([0xc3]), 'bad-marker');
  });

  test('truncated: a header cut short', () => {
    for (let n = 2; n < 10; n++) decodeFails(step.subarray(0, n), 'truncated', /header/);
  });

  test('unknown-fingerprint: a schema nobody registered', () => {
    const bytes = Buffer.from(step);
    bytes.writeBigUInt64LE(0x0123456789abcdefn, 2);
    decodeFails(bytes, 'unknown-fingerprint', /0123456789abcdef/);
  });

  test('wrong-event: a trajectory read as a step', () => {
    decodeFails(codec.encode('trajectory', sampleEvents.trajectory), 'wrong-event', /expected a step event, got a trajectory/);
  });

  test('truncated: every cut of the datum fails as truncated (or, rarely, invalid-value), never hangs', () => {
    for (let n = 10; n < step.length; n++) decodeFails(step.subarray(0, n), ['truncated', 'invalid-value']);
    decodeFails(step.subarray(0, step.length - 1), 'truncated');
  });

  test('invalid-value: trailing bytes after the datum', () => {
    decodeFails(Buffer.concat([step, Buffer.from([0])]), 'invalid-value', /1 trailing bytes/);
  });

  test('invalid-value: a corrupt union index', () => {
    // stateKey is ["null","string"]: index 2 (zigzag 4) does not exist.
    const value = makeStep({ stateKey: null, metrics: {}, info: {} });
    const bytes = codec.encode('step', value);
    // Layout from the end: stateKey index, metrics end, info end, eventTimeMs varint (6 bytes here).
    const timeBytes = 6;
    const at = bytes.length - timeBytes - 3;
    assert.equal(bytes[at], 0, 'the stateKey null branch');
    const corrupt = Buffer.from(bytes);
    corrupt[at] = 4;
    decodeFails(corrupt, 'invalid-value', /union index/);
  });

  test('invalid-value, fast: a corrupt block count in a map or an array', () => {
    const value = makeStep({ metrics: { a: 1 }, info: {}, stateKey: null });
    const bytes = codec.encode('step', value);
    const at = bytes.length - 6 - 2 - 11; // metrics: count, key(2), double(8), end(1); then info end, time
    assert.equal(bytes[at], 2, 'the metrics block count (zigzag 1)');
    const huge = Buffer.concat([bytes.subarray(0, at), Buffer.from([0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]), bytes.subarray(at + 1)]);
    const started = Date.now();
    decodeFails(huge, 'invalid-value', /block count/);
    // An array<int> count of 2^40 where 3 items were written.
    const ints = codec.encode('step', makeStep({ observation: '', observationTokenIds: [7, 8, 9] }));
    const countAt = ints.indexOf(Buffer.from([0x02, 0x06, 0x0e, 0x10, 0x12])) + 1; // union index 1, count 3, 7, 8, 9
    assert.ok(countAt > 0);
    const bigCount = Buffer.concat([ints.subarray(0, countAt), Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x20]), ints.subarray(countAt + 1)]);
    decodeFails(bigCount, 'invalid-value', /block count/);
    assert.ok(Date.now() - started < 1000, 'corrupt counts must not loop');
  });

  test('truncated or invalid-value: a negative string length', () => {
    const bytes = Buffer.from(step);
    bytes[10] = 0x01; // eventId length varint: zigzag 1 = -1
    decodeFails(bytes, ['truncated', 'invalid-value']);
  });

  test('oversize: more bytes than maxEventBytes, checked before anything else', () => {
    const small = new EventCodec(registry, { maxEventBytes: 512 });
    decodeFails(step, 'oversize', /over maxEventBytes \(512\)/, small);
    decodeFails(Buffer.alloc(600), 'oversize', undefined, small);
  });

  test('random corruption of a valid event: DecodeError or a value, nothing else, quickly', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const source = codec.encode('trajectory', sampleEvents.trajectory);
    const started = Date.now();
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(source);
      for (let flips = 1 + Math.floor(random() * 3); flips > 0; flips--) {
        bytes[10 + Math.floor(random() * (bytes.length - 10))] = Math.floor(random() * 256);
      }
      try {
        codec.decode('trajectory', bytes);
      } catch (e) {
        assert.ok(e instanceof DecodeError, `flip ${i}: ${String(e)}`);
      }
    }
    assert.ok(Date.now() - started < 5000);
  });
});
