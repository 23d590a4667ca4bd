import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateEvent, type TrajectoryEvent, type TrajectoryStep } from '../../../schemas/index.js';
import {
  SampleError,
  buildSample,
  buildSampleWithReport,
  byteTokenizer,
  decodeByteTokens,
  sampleIdOf,
  type BuildSampleOptions,
  type Tokenizer,
} from '../../../processors/samples/index.js';
import { sampleEvents } from '../../../bench/load/events.js';

const T0 = 1_764_400_000_000;

function turn(stepIndex: number, observation: number[] | null, action: number[], logProbs: number[], policyVersion = 0): TrajectoryStep {
  return {
    stepIndex,
    observation: `obs ${stepIndex}`,
    observationTokenIds: observation,
    action: `act ${stepIndex}`,
    actionTokenIds: action,
    actionLogProbs: logProbs,
    policyVersion,
    reward: 0,
    actionValid: true,
    stateKey: null,
    eventTimeMs: T0 + stepIndex,
  };
}

function trajectoryOf(steps: TrajectoryStep[], totalReward = 1): TrajectoryEvent {
  const versions = steps.map((s) => s.policyVersion);
  return {
    runId: 'run-1',
    envName: 'FrozenLake',
    envVersion: 'v1',
    groupId: 'g1',
    episodeId: 'e1',
    outcome: 'terminated',
    stepCount: steps.length,
    totalReward,
    success: totalReward === 1,
    invalidActions: 0,
    gapCount: 0,
    minPolicyVersion: Math.min(...versions),
    maxPolicyVersion: Math.max(...versions),
    firstEventTimeMs: T0,
    lastEventTimeMs: T0 + steps.length,
    steps,
    metrics: {},
  };
}

const options: BuildSampleOptions = { estimator: 'grpo', group: { size: 4, rewardMean: 0.5, rewardStd: 0.5 } };

// Two turns: observation [5, 6] then action [10, 11]; observation [7] then action [12].
const twoTurns = trajectoryOf([turn(0, [5, 6], [10, 11], [-0.5, -0.25], 3), turn(1, [7], [12], [-1], 2)]);

describe('buildSample', () => {
  test('lays out observations then actions turn by turn, the mask on action tokens only (hand-computed)', () => {
    const sample = buildSample(twoTurns, { level: 'trajectory', advantage: 0.5 }, options);
    assert.deepEqual(sample.tokenIds, [5, 6, 10, 11, 7, 12]);
    assert.deepEqual(sample.lossMask, [0, 0, 1, 1, 0, 1]);
    assert.deepEqual(sample.advantages, [0, 0, 0.5, 0.5, 0, 0.5]);
    assert.deepEqual(sample.behaviourLogProbs, [0, 0, -0.5, -0.25, 0, -1]);
    assert.equal(sample.policyVersion, 2, 'the oldest version that sampled an action token');
    assert.equal(sample.stepAdvantages, null);
    assert.equal(sample.reward, 1);
    assert.equal(sample.estimator, 'grpo');
    assert.deepEqual([sample.groupSize, sample.groupRewardMean, sample.groupRewardStd], [4, 0.5, 0.5]);
    assert.equal(sample.eventTimeMs, twoTurns.lastEventTimeMs);
    assert.deepEqual(validateEvent('sample', sample), { ok: true });
  });

  test("GiGPO: each step's advantage on that step's action tokens, and the per-step values in stepAdvantages", () => {
    const sample = buildSample(twoTurns, { level: 'step', stepAdvantages: [0.75, -0.25] }, { ...options, estimator: 'gigpo' });
    assert.deepEqual(sample.advantages, [0, 0, 0.75, 0.75, 0, -0.25]);
    assert.deepEqual(sample.stepAdvantages, [0.75, -0.25]);
    assert.equal(sample.estimator, 'gigpo');
    assert.deepEqual(validateEvent('sample', sample), { ok: true });
  });

  test('rounds advantages to float32, as the Avro schema stores them', () => {
    const sample = buildSample(twoTurns, { level: 'trajectory', advantage: 0.1 }, options);
    assert.equal(sample.advantages[2], Math.fround(0.1));
  });

  test('tokenizes observations without token ids with the injected tokenizer, or the byte stand-in by default', () => {
    const steps = [{ ...turn(0, null, [10], [-0.5]), observation: 'hé' }];
    const byBytes = buildSample(trajectoryOf(steps), { level: 'trajectory', advantage: 1 }, options);
    assert.deepEqual(byBytes.tokenIds, [0x68 + 3, 0xc3 + 3, 0xa9 + 3, 10]);
    assert.deepEqual(byBytes.lossMask, [0, 0, 0, 1]);
    assert.equal(decodeByteTokens(byBytes.tokenIds.slice(0, 3)), 'hé');

    const words: Tokenizer = { name: 'words', tokenize: (text) => text.split(/\s+/).map((w) => w.length) };
    const steps2 = [{ ...turn(0, null, [10], [-0.5]), observation: 'a bb ccc' }];
    const byWords = buildSample(trajectoryOf(steps2), { level: 'trajectory', advantage: 1 }, { ...options, tokenizer: words });
    assert.deepEqual(byWords.tokenIds, [1, 2, 3, 10]);
  });

  test('the sample id depends only on run, episode and scope, so a rebuilt sample is identical', () => {
    const a = buildSample(twoTurns, { level: 'trajectory', advantage: 0.5 }, options);
    const b = buildSample(structuredClone(twoTurns), { level: 'trajectory', advantage: 0.5 }, options);
    assert.deepEqual(a, b);
    assert.equal(a.sampleId, sampleIdOf('run-1', 'e1'));
    assert.match(a.sampleId, /^sample-[0-9a-f]{32}$/);
    assert.notEqual(sampleIdOf('run-1', 'e1', 'replay-7'), a.sampleId);
    assert.notEqual(sampleIdOf('run-1', 'e2'), a.sampleId);
  });

  test('matches the recorded fixture sample built from the fixture trajectory', () => {
    const fixture = sampleEvents.sample;
    const sample = buildSample(
      sampleEvents.trajectory,
      { level: 'trajectory', advantage: 0.8660254 },
      {
        estimator: 'grpo',
        group: { size: fixture.groupSize, rewardMean: fixture.groupRewardMean, rewardStd: fixture.groupRewardStd },
      },
    );
    assert.deepEqual(sample.tokenIds, fixture.tokenIds);
    assert.deepEqual(sample.lossMask, fixture.lossMask);
    assert.deepEqual(sample.advantages, fixture.advantages);
    assert.deepEqual(sample.behaviourLogProbs, fixture.behaviourLogProbs);
    assert.deepEqual(validateEvent('sample', sample), { ok: true });
  });

  test('refuses what cannot be a valid sample', () => {
    assert.throws(() => buildSample(twoTurns, { level: 'step', stepAdvantages: [1] }, options), /got 1 step advantages for 2 steps/);
    assert.throws(() => buildSample(twoTurns, { level: 'trajectory', advantage: NaN }, options), SampleError);
    assert.throws(() => buildSample(twoTurns, { level: 'trajectory', advantage: 1e39 }, options), /not a finite float32/);
    const noActions = trajectoryOf([turn(0, [1, 2], [], [])]);
    assert.throws(() => buildSample(noActions, { level: 'trajectory', advantage: 1 }, options), /no action tokens/);
    const misaligned = trajectoryOf([turn(0, [1], [10, 11], [-1])]);
    assert.throws(() => buildSample(misaligned, { level: 'trajectory', advantage: 1 }, options), /2 action tokens but 1 log-probs/);
  });
});

describe('the context window', () => {
  // Turns of 3+2, 2+2 and 2+2 tokens: 13 in all.
  const threeTurns = trajectoryOf([turn(0, [1, 2, 3], [10, 11], [-0.1, -0.2], 1), turn(1, [4, 5], [12, 13], [-0.3, -0.4], 2), turn(2, [6, 7], [14, 15], [-0.5, -0.6], 3)]);
  const gigpo = { level: 'step', stepAdvantages: [1, 2, 3] } as const;

  test('keeps everything when it fits', () => {
    const { sample, window } = buildSampleWithReport(threeTurns, gigpo, { ...options, maxContextTokens: 13 });
    assert.equal(sample.tokenIds.length, 13);
    assert.deepEqual(window, {
      maxContextTokens: 13,
      turns: 3,
      firstKeptTurn: 0,
      droppedTurns: 0,
      trimmedObservationTokens: 0,
      droppedTokens: 0,
      keptTokens: 13,
      truncated: false,
    });
  });

  test('drops the oldest turns whole and keeps the most recent ones', () => {
    const { sample, window, policyVersions } = buildSampleWithReport(threeTurns, gigpo, { ...options, maxContextTokens: 11 });
    assert.deepEqual(sample.tokenIds, [4, 5, 12, 13, 6, 7, 14, 15]);
    assert.deepEqual(sample.lossMask, [0, 0, 1, 1, 0, 0, 1, 1]);
    assert.deepEqual(sample.advantages, [0, 0, 2, 2, 0, 0, 3, 3]);
    assert.deepEqual(sample.stepAdvantages, [2, 3], 'the kept turns');
    assert.equal(sample.policyVersion, 2, 'the oldest version among the kept action tokens');
    assert.deepEqual(policyVersions, { min: 2, max: 3 });
    assert.deepEqual(window, { maxContextTokens: 11, turns: 3, firstKeptTurn: 1, droppedTurns: 1, trimmedObservationTokens: 0, droppedTokens: 5, keptTokens: 8, truncated: true });
    assert.deepEqual(validateEvent('sample', sample), { ok: true });
  });

  test('when the last turn alone is too long, keeps its action whole and the end of its observation', () => {
    const { sample, window } = buildSampleWithReport(threeTurns, gigpo, { ...options, maxContextTokens: 3 });
    assert.deepEqual(sample.tokenIds, [7, 14, 15]);
    assert.deepEqual(sample.lossMask, [0, 1, 1]);
    assert.deepEqual(window, { maxContextTokens: 3, turns: 3, firstKeptTurn: 2, droppedTurns: 2, trimmedObservationTokens: 1, droppedTokens: 10, keptTokens: 3, truncated: true });
  });

  test('never cuts an action: a last action longer than the window is refused', () => {
    assert.throws(() => buildSample(threeTurns, gigpo, { ...options, maxContextTokens: 1 }), /last action has 2 tokens, more than the context window of 1/);
  });
});

// Trajectories with arbitrary observations (token ids, or text for the tokenizer) and actions.
const arbitraryTurn = fc.record({
  observation: fc.oneof(fc.array(fc.integer({ min: 0, max: 50_000 }), { maxLength: 12 }), fc.string({ maxLength: 12 })),
  action: fc.array(fc.tuple(fc.integer({ min: 0, max: 50_000 }), fc.double({ min: -20, max: 0, noNaN: true })), { minLength: 1, maxLength: 8 }),
  policyVersion: fc.nat({ max: 5 }),
  advantage: fc.double({ min: -10, max: 10, noNaN: true }),
});
const arbitraryTrajectory = fc.array(arbitraryTurn, { minLength: 1, maxLength: 6 }).map((turns) => ({
  trajectory: trajectoryOf(
    turns.map((t, i) => ({
      ...turn(
        i,
        typeof t.observation === 'string' ? null : t.observation,
        t.action.map(([id]) => id),
        t.action.map(([, lp]) => lp),
        t.policyVersion,
      ),
      observation: typeof t.observation === 'string' ? t.observation : `obs ${i}`,
    })),
  ),
  stepAdvantages: turns.map((t) => t.advantage),
}));

/** The expected full layout, from the steps alone: each observation token then each action token. */
function fullLayout(trajectory: TrajectoryEvent) {
  const tokens: number[] = [];
  const mask: number[] = [];
  /** Offset of each turn's first token, and of its first action token. */
  const turnStarts: number[] = [];
  const actionStarts: number[] = [];
  for (const s of trajectory.steps) {
    const observation = s.observationTokenIds ?? byteTokenizer.tokenize(s.observation);
    turnStarts.push(tokens.length);
    actionStarts.push(tokens.length + observation.length);
    tokens.push(...observation, ...s.actionTokenIds);
    mask.push(...observation.map(() => 0), ...s.actionTokenIds.map(() => 1));
  }
  return { tokens, mask, turnStarts, actionStarts };
}

describe('buildSample properties', () => {
  test('the loss mask covers every action token and no observation token; all arrays align; the sample validates', () => {
    fc.assert(
      fc.property(arbitraryTrajectory, fc.boolean(), ({ trajectory, stepAdvantages }, perStep) => {
        const advantages = perStep ? { level: 'step' as const, stepAdvantages } : { level: 'trajectory' as const, advantage: stepAdvantages[0]! };
        const sample = buildSample(trajectory, advantages, { ...options, maxContextTokens: 1_000_000 });
        const { tokens, mask } = fullLayout(trajectory);
        assert.deepEqual(sample.tokenIds, tokens);
        assert.deepEqual(sample.lossMask, mask);
        const n = sample.tokenIds.length;
        assert.equal(sample.lossMask.length, n);
        assert.equal(sample.advantages.length, n);
        assert.equal(sample.behaviourLogProbs.length, n);
        const actionLogProbs = trajectory.steps.flatMap((s) => s.actionLogProbs.map(Math.fround));
        assert.deepEqual(
          sample.behaviourLogProbs.filter((_, i) => mask[i] === 1),
          actionLogProbs,
        );
        for (let i = 0; i < n; i++) {
          if (mask[i] === 0) {
            assert.equal(sample.advantages[i], 0);
            assert.equal(sample.behaviourLogProbs[i], 0);
          }
        }
        assert.deepEqual(validateEvent('sample', sample), { ok: true });
      }),
      { seed: 20261129, numRuns: 300 },
    );
  });

  test('under any window the sample is the tail of the full sequence, cut only at turn boundaries, never inside an action', () => {
    fc.assert(
      fc.property(arbitraryTrajectory, fc.integer({ min: 8, max: 80 }), ({ trajectory, stepAdvantages }, maxContextTokens) => {
        const { sample, window } = buildSampleWithReport(trajectory, { level: 'step', stepAdvantages }, { ...options, maxContextTokens });
        const { tokens, mask, turnStarts, actionStarts } = fullLayout(trajectory);
        const n = sample.tokenIds.length;
        assert.ok(n <= maxContextTokens);
        assert.deepEqual(sample.tokenIds, tokens.slice(tokens.length - n));
        assert.deepEqual(sample.lossMask, mask.slice(mask.length - n));
        // Every action token of every kept turn is there: the cut falls on a turn start, or (the last
        // turn alone being too long) inside the last turn's observation.
        const keptActionTokens = trajectory.steps.slice(window.firstKeptTurn).reduce((sum, s) => sum + s.actionTokenIds.length, 0);
        assert.equal(
          sample.lossMask.reduce((a, b) => a + b, 0),
          keptActionTokens,
        );
        const cut = tokens.length - n;
        const last = trajectory.steps.length - 1;
        assert.ok(
          cut === turnStarts[window.firstKeptTurn] ||
            (window.trimmedObservationTokens > 0 && window.firstKeptTurn === last && cut > turnStarts[last]! && cut <= actionStarts[last]!),
          'an action is never split',
        );
        assert.equal(window.droppedTokens, cut);
        assert.equal(window.truncated, cut > 0);
        assert.deepEqual(validateEvent('sample', sample), { ok: true });
      }),
      { seed: 20261129, numRuns: 300 },
    );
  });
});
