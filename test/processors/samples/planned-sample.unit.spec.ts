// Planned samples (processors/samples/planned-sample.ts) against buildSample, on trajectories of WireSteps:
// the same sample (every field, the four arrays read through the getters), the same bytes
// (write-planned-sample.ts against codec.encode), the same errors — over random episodes, both advantage
// levels (with −0), context windows that drop turns and trim the last observation, and observations with
// and without token ids (the tokenizer's path).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EventCodec, SchemaRegistry, type StepEvent, type TrajectoryEvent } from '../../../schemas/index.js';
import { WireStepReader } from '../../../schemas/wire-step.js';
import { eventDecoder } from '../../../streams/event-consumer.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { buildSample, type SampleAdvantages } from '../../../processors/samples/build-sample.js';
import { PlannedSample, planSample } from '../../../processors/samples/planned-sample.js';
import { PlannedSampleWriter } from '../../../processors/samples/write-planned-sample.js';
import { makeStep } from '../../../bench/load/events.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const reader = WireStepReader.of(codec)!;
const ordinary = eventDecoder(codec, 'step');
const writer = PlannedSampleWriter.of(codec)!;

const arbitraryTurn = fc.record({
  observationTokenIds: fc.option(fc.array(fc.nat({ max: 2 ** 31 - 1 }), { maxLength: 30 }), { nil: null }),
  observation: fc.string({ maxLength: 20 }),
  actionTokenIds: fc.array(fc.nat({ max: 50_000 }), { maxLength: 12 }),
  logProb: fc.oneof(fc.constant(-0), fc.float({ min: -20, max: 0, noNaN: true })),
  policyVersion: fc.nat({ max: 6 }),
  advantage: fc.oneof(fc.constant(-0), fc.double({ min: -10, max: 10, noNaN: true })),
});

/** The same episode as a trajectory of WireSteps and as the ordinary trajectory. */
type Turn = typeof arbitraryTurn extends fc.Arbitrary<infer T> ? T : never;

function trajectories(turns: readonly Turn[]): { wire: TrajectoryEvent; plain: TrajectoryEvent } {
  const steps: StepEvent[] = turns.map((turn, i) =>
    makeStep(
      {
        runId: 'run',
        groupId: 'group',
        episodeId: 'episode',
        stepIndex: i,
        observation: turn.observation,
        observationTokenIds: turn.observationTokenIds,
        actionTokenIds: turn.actionTokenIds,
        actionLogProbs: turn.actionTokenIds.map((_, t) => Math.fround(turn.logProb - t / 7)),
        policyVersion: turn.policyVersion,
        terminated: i === turns.length - 1,
        truncated: false,
      },
      i,
    ),
  );
  const bytes = steps.map((s) => codec.encode('step', s));
  return { wire: trajectoryFromSteps(bytes.map((b) => reader.read(b)!)).trajectory, plain: trajectoryFromSteps(bytes.map((b) => ordinary(b))).trajectory };
}

function outcome<T>(f: () => T): { value: T } | { error: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

test("unit: a planned sample is buildSample's sample, written byte for byte as the codec writes it, or fails as buildSample fails", () => {
  fc.assert(
    fc.property(
      fc.array(arbitraryTurn, { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      fc.oneof(fc.integer({ min: 4, max: 60 }), fc.constant(8192)),
      (turns, perStep, maxContextTokens) => {
        const { wire, plain } = trajectories(turns);
        const advantages: SampleAdvantages = perStep ? { level: 'step', stepAdvantages: turns.map((t) => t.advantage) } : { level: 'trajectory', advantage: turns[0]!.advantage };
        const options = { estimator: perStep ? 'gigpo' : 'grpo', group: { size: 4, rewardMean: 0.25, rewardStd: 0.5 }, maxContextTokens };
        const expected = outcome(() => buildSample(plain, advantages, options));
        const planned = outcome(() => planSample(wire, advantages, options));
        if ('error' in expected) {
          assert.deepEqual(planned, expected);
          return;
        }
        assert.ok('value' in planned && planned.value instanceof PlannedSample, 'planned from WireSteps');
        const sample = planned.value as PlannedSample;
        const bytes = writer.encode(sample);
        assert.ok(bytes.equals(codec.encode('sample', expected.value)), 'byte for byte');
        assert.deepStrictEqual(codec.decode('sample', bytes), expected.value);
        // Read as an ordinary sample (the getters build it).
        assert.deepStrictEqual(
          {
            ...sample,
            tokenIds: sample.tokenIds,
            lossMask: sample.lossMask,
            advantages: sample.advantages,
            behaviourLogProbs: sample.behaviourLogProbs,
            turns: undefined,
            tokenCount: undefined,
            build: undefined,
            built: undefined,
          },
          { ...expected.value, turns: undefined, tokenCount: undefined, build: undefined, built: undefined },
        );
      },
    ),
    { numRuns: 500 },
  );
});

test("unit: a trajectory with an ordinary step gets buildSample's plain sample", () => {
  const trajectory = trajectoryFromSteps([makeStep({ terminated: true }, 2)]).trajectory;
  const sample = planSample(trajectory, { level: 'trajectory', advantage: 1 }, { estimator: 'grpo', group: { size: 2, rewardMean: 0, rewardStd: 1 } });
  assert.ok(!(sample instanceof PlannedSample));
  assert.deepStrictEqual(sample, buildSample(trajectory, { level: 'trajectory', advantage: 1 }, { estimator: 'grpo', group: { size: 2, rewardMean: 0, rewardStd: 1 } }));
});
