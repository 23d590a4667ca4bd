// WireSteps (schemas/wire-step.ts) and the trajectories written from their bytes (schemas/wire-writer.ts):
// - a WireStep has exactly the ordinary decode's values, field by field, for any valid step;
// - the wire reader reads nothing the ordinary path (decode + validateEvent) rejects: invalid values,
//   truncations at every length, flipped bytes — there it returns null and the ordinary path gives the error;
// - arrays in several blocks and other writer schemas are left to the ordinary decode;
// - a trajectory of WireSteps is written byte for byte as the codec writes the ordinary trajectory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DecodeError, EventCodec, OversizeEventError, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { WireStep, WireStepReader, actionTokenCount } from '../../schemas/wire-step.js';
import { WireTrajectoryWriter } from '../../schemas/wire-writer.js';
import { eventDecoder, wireStepDecoder } from '../../streams/event-consumer.js';
import { trajectoryFromSteps } from '../../processors/assembly/open-episode.js';
import { arbitraryStep } from '../fixtures/step-arbitrary.js';
import { makeStep } from '../../bench/load/events.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const reader = WireStepReader.of(codec)!;
const ordinary = eventDecoder(codec, 'step');
const FIELDS = Object.keys(makeStep()) as (keyof StepEvent)[];

function assertSameStep(wire: StepEvent, plain: StepEvent): void {
  for (const field of FIELDS) assert.deepStrictEqual(wire[field], plain[field], field);
}

test('unit: the wire reader applies to the shipped step, trajectory and sample schemas (a schema change that turns it off fails here)', () => {
  assert.ok(reader instanceof WireStepReader);
  assert.ok(WireTrajectoryWriter.of(codec) !== null);
});

test("unit: a WireStep has the ordinary decode's values in every field, the passed-through ones read on first access", () => {
  fc.assert(
    fc.property(arbitraryStep, (step) => {
      const bytes = codec.encode('step', step);
      const wire = reader.read(bytes);
      assert.ok(wire instanceof WireStep, 'a valid single-block step is read');
      assert.equal(actionTokenCount(wire), step.actionTokenIds.length);
      assertSameStep(wire, ordinary(bytes));
      // And through the consumer's decoder.
      assertSameStep(wireStepDecoder(codec)(bytes), ordinary(bytes));
    }),
    { numRuns: 400 },
  );
});

const invalid: [string, Partial<StepEvent>][] = [
  ['a negative observation token id', { observationTokenIds: [3, -1] }],
  ['a negative action token id', { actionTokenIds: [1, -7], actionLogProbs: [-1, -1] }],
  ['a positive log-prob', { actionTokenIds: [1, 2], actionLogProbs: [-0.5, 0.25] }],
  ['a NaN log-prob', { actionTokenIds: [1], actionLogProbs: [Number.NaN] }],
  ['an infinite log-prob', { actionTokenIds: [1], actionLogProbs: [Number.NEGATIVE_INFINITY] }],
  ['fewer log-probs than action tokens', { actionTokenIds: [1, 2, 3], actionLogProbs: [-1, -1] }],
  ['an empty event id', { eventId: '' }],
  ['an empty episode id', { episodeId: '' }],
  ['a negative policy version', { policyVersion: -1 }],
  ['an infinite reward', { reward: Number.POSITIVE_INFINITY }],
  ['an empty state key', { stateKey: '' }],
  ['a non-positive event time', { eventTimeMs: 0 }],
];

for (const [what, overrides] of invalid) {
  test(`unit: a step with ${what} is not read by the wire reader, and the ordinary decoder says why`, () => {
    const bytes = codec.encode('step', makeStep(overrides, 11));
    assert.equal(reader.read(bytes), null);
    assert.throws(() => ordinary(bytes), DecodeError);
    assert.throws(
      () => wireStepDecoder(codec)(bytes),
      (err: unknown) => err instanceof DecodeError && err.message === captureError(() => ordinary(bytes)),
    );
  });
}

function captureError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

test('unit: truncated and corrupted steps are read by the wire reader only where the ordinary decode gives the same step', () => {
  fc.assert(
    fc.property(arbitraryStep, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), fc.nat(), (step, flips, cut) => {
      const bytes = codec.encode('step', step);
      // Every truncation is refused (an Avro datum has no slack).
      assert.equal(reader.read(bytes.subarray(0, cut % bytes.length)), null);
      const corrupt = Buffer.from(bytes);
      for (const [at, value] of flips) corrupt[at % corrupt.length] = value;
      const wire = reader.read(corrupt);
      if (wire === null) return;
      let plain: StepEvent;
      try {
        plain = ordinary(corrupt);
      } catch (err) {
        assert.fail(`the wire reader read bytes the ordinary decode rejects: ${(err as Error).message}`);
      }
      assertSameStep(wire, plain);
    }),
    { numRuns: 2000 },
  );
});

test('unit: an array written in two blocks, and a step of another writer schema, go to the ordinary decode', () => {
  const step = makeStep({ actionTokenIds: [5, 6], actionLogProbs: [-1, -2] }, 3);
  const bytes = codec.encode('step', step);
  const wire = reader.read(bytes)!;
  const { actionTokensStart: start, actionTokensEnd: end } = wire.layout;
  // One block [count 2][0a 0c][0] rewritten as two blocks of one: [count 1][0a][count 1][0c][0].
  assert.deepEqual([...bytes.subarray(start - 1, end + 1)], [0x04, 0x0a, 0x0c, 0x00]);
  const twoBlocks = Buffer.concat([bytes.subarray(0, start - 1), Buffer.from([0x02, 0x0a, 0x02, 0x0c, 0x00]), bytes.subarray(end + 1)]);
  assert.equal(reader.read(twoBlocks), null);
  assert.deepStrictEqual(ordinary(twoBlocks).actionTokenIds, [5, 6]);
  assertSameStep(wireStepDecoder(codec)(twoBlocks), ordinary(bytes));
  // Another fingerprint in the header: not this reader's schema.
  const other = Buffer.from(bytes);
  other[5] = other[5]! ^ 0xff;
  assert.equal(reader.read(other), null);
});

test('unit: a trajectory of WireSteps is written from their bytes exactly as the codec writes the ordinary trajectory', () => {
  const writer = WireTrajectoryWriter.of(codec)!;
  fc.assert(
    fc.property(fc.array(arbitraryStep, { minLength: 1, maxLength: 6 }), fc.boolean(), (steps, truncated) => {
      const episode = steps.map((s, i) => ({
        ...s,
        runId: 'r',
        episodeId: 'e',
        groupId: 'g',
        stepIndex: i,
        terminated: !truncated && i === steps.length - 1,
        truncated: truncated && i === steps.length - 1,
      }));
      const bytes = episode.map((s) => codec.encode('step', s));
      const wire = trajectoryFromSteps(bytes.map((b) => reader.read(b)!)).trajectory;
      const plain = trajectoryFromSteps(bytes.map((b) => ordinary(b))).trajectory;
      const written = writer.encode(wire)!;
      assert.ok(written.equals(codec.encode('trajectory', plain)), 'byte for byte');
      assert.deepStrictEqual(codec.decode('trajectory', written), plain);
    }),
    { numRuns: 300 },
  );
  // A trajectory with an ordinary step is left to the codec.
  assert.equal(writer.encode(trajectoryFromSteps([makeStep({ terminated: true }, 1)]).trajectory), null);
});

test("unit: a trajectory written from its steps' bytes past maxEventBytes fails as the codec fails, with OversizeEventError", () => {
  const small = new EventCodec(SchemaRegistry.fromSchemasDir(), { maxEventBytes: 2000 });
  const steps = [0, 1, 2, 3].map((i) => makeStep({ runId: 'r', episodeId: 'e', stepIndex: i, terminated: i === 3 }, i));
  const wire = trajectoryFromSteps(steps.map((s) => WireStepReader.of(small)!.read(codec.encode('step', s))!)).trajectory;
  assert.throws(() => WireTrajectoryWriter.of(small)!.encode(wire), OversizeEventError);
  assert.throws(() => small.encode('trajectory', trajectoryFromSteps(steps).trajectory), OversizeEventError);
});
