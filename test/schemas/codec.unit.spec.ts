import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventCodec, OversizeEventError, SchemaRegistry, eventNames, type EventName, type EventTypes, type StepEvent } from '../../schemas/index.js';
import { makeStep, sampleEvents } from '../../bench/load/events.js';
import { codec, datumOf, plain, referenceType, registry } from './helpers.js';

describe('EventCodec round trips', () => {
  for (const event of eventNames) {
    test(`${event}: decode(encode(x)) equals x, and the datum is what plain avsc writes`, () => {
      const value = sampleEvents[event];
      const bytes = codec.encode(event, value);
      assert.deepStrictEqual(codec.decode(event, bytes), value);
      const reference = referenceType(event);
      assert.deepStrictEqual(datumOf(bytes), reference.toBuffer(value));
      assert.deepStrictEqual(plain(reference.fromBuffer(datumOf(bytes))), value);
    });
  }

  test('decodeAny names the event and returns its value', () => {
    for (const event of eventNames) {
      const decoded = codec.decodeAny(codec.encode(event, sampleEvents[event]));
      assert.equal(decoded.event, event);
      assert.deepStrictEqual(decoded.value, sampleEvents[event]);
    }
  });

  test('decoded records are plain objects', () => {
    const trajectory = codec.decode('trajectory', codec.encode('trajectory', sampleEvents.trajectory));
    assert.equal(Object.getPrototypeOf(trajectory), Object.prototype);
    assert.equal(Object.getPrototypeOf(trajectory.steps[0]), Object.prototype);
  });

  test('non-ASCII strings, map keys and long strings survive', () => {
    const step = makeStep({
      observation: 'Lac gelé ❄️ — «départ» '.repeat(10),
      action: '<think>日本語で考える 🤔</think><answer>Right</answer>',
      envName: 'Über',
      info: { 'clé é': 'välue', ascii: 'x'.repeat(70), emoji: '🎯'.repeat(40) },
      stateKey: 'é',
    });
    const back = codec.decode('step', codec.encode('step', step));
    assert.deepStrictEqual(back, step);
    assert.deepStrictEqual(datumOf(codec.encode('step', step)), referenceType('step').toBuffer(step));
  });

  test('int edge values and float specials in arrays match avsc byte for byte', () => {
    const ints = [0, -1, 1, 63, 64, -64, -65, 127, 128, 8191, 8192, -8193, 2 ** 20, 2 ** 31 - 1, -(2 ** 31)];
    const floats = [0, -0, -1.5, Math.fround(-1e-7), NaN, -Infinity, Infinity, Math.fround(3.4e38)];
    const step = makeStep({ actionTokenIds: ints, observationTokenIds: ints.slice().reverse(), actionLogProbs: floats });
    const bytes = codec.encode('step', step);
    assert.deepStrictEqual(datumOf(bytes), referenceType('step').toBuffer(step));
    const back = codec.decode('step', bytes);
    assert.deepStrictEqual(back.actionTokenIds, ints);
    assert.deepStrictEqual(back.observationTokenIds, ints.slice().reverse());
    assert.deepStrictEqual(back.actionLogProbs, floats);
  });

  test('empty arrays and maps, null unions', () => {
    const step = makeStep({ observationTokenIds: null, actionTokenIds: [], actionLogProbs: [], metrics: {}, info: {}, stateKey: null });
    assert.deepStrictEqual(codec.decode('step', codec.encode('step', step)), step);
  });

  test('a float32 log-prob comes back as the nearest float32 (Avro float)', () => {
    const step = makeStep({ actionTokenIds: [5], actionLogProbs: [-0.1] });
    assert.deepStrictEqual(codec.decode('step', codec.encode('step', step)).actionLogProbs, [Math.fround(-0.1)]);
  });

  test('each encode returns its own buffer (the scratch buffer is never handed out)', () => {
    const a = codec.encode('step', makeStep({}, 1));
    const copy = Buffer.from(a);
    codec.encode('step', makeStep({}, 2));
    assert.deepStrictEqual(a, copy);
  });
});

describe('single-object header', () => {
  test('is C3 01 then the little-endian CRC-64-AVRO of the canonical form', () => {
    for (const event of eventNames) {
      const bytes = codec.encode(event, sampleEvents[event]);
      const entry = registry.current(event);
      assert.equal(bytes[0], 0xc3);
      assert.equal(bytes[1], 0x01);
      assert.equal(bytes.readBigUInt64LE(2), entry.fingerprint);
      assert.equal(codec.fingerprintOf(event), entry.fingerprintHex);
      assert.equal(Buffer.from(bytes.subarray(2, 10)).reverse().toString('hex'), entry.fingerprintHex);
    }
  });
});

describe('sizes', () => {
  test('makeStep gives about 1 KB encoded, deterministically', () => {
    for (const seed of [0, 1, 7, 100, 12_345]) {
      const size = codec.encode('step', makeStep({}, seed)).length;
      assert.ok(size > 850 && size < 1150, `seed ${seed}: ${size} bytes`);
      assert.deepStrictEqual(makeStep({}, seed), makeStep({}, seed));
    }
  });

  test('an event over maxEventBytes is refused by encode', () => {
    const small = new EventCodec(registry, { maxEventBytes: 2048 });
    const step = makeStep({ observation: 'x'.repeat(4096) });
    assert.throws(
      () => small.encode('step', step),
      (e: unknown) => e instanceof OversizeEventError && e.limit === 2048 && e.bytes > 4096,
    );
    assert.ok(small.encode('step', makeStep()).length < 2048);
  });

  test('events larger than the initial scratch buffer are written in full', () => {
    const step = makeStep({ observation: 'ab'.repeat(100_000), actionTokenIds: Array.from({ length: 30_000 }, (_, i) => i * 7), actionLogProbs: new Array(30_000).fill(-0.5) });
    const bytes = codec.encode('step', step);
    assert.ok(bytes.length > 200_000);
    assert.deepStrictEqual(codec.decode('step', bytes), step);
    assert.deepStrictEqual(codec.decode('step', codec.encode('step', makeStep())), makeStep()); // still fine after growing
  });

  test('maxEventBytes must be sensible', () => {
    assert.throws(() => new EventCodec(registry, { maxEventBytes: 5 }), /maxEventBytes/);
    assert.throws(() => new EventCodec(registry, { maxEventBytes: 1.5e3 + 0.5 }), /maxEventBytes/);
  });
});

// Compile-time checks (tsc --noEmit): the generated types line up with the fixtures and the codec's
// signatures. Never called.
export function typeChecks(): void {
  const typed: EventTypes['step'] = sampleEvents.step satisfies StepEvent;
  const decoded: StepEvent = codec.decode('step', codec.encode('step', typed));
  // @ts-expect-error a trajectory is not a step
  codec.encode('step', sampleEvents.trajectory);
  const any = codec.decodeAny(Buffer.alloc(0));
  if (any.event === 'policy_version') {
    const version: number = any.value.version; // narrowed by the event name
    void version;
  }
  const names: EventName[] = [...eventNames];
  void [decoded, names, SchemaRegistry];
}
