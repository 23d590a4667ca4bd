// Unit: one (algorithm, seed) run of `bench learning` (bench/learning-seed.ts) and the comparison printed over them
// (bench/learning-report.ts) — the loop's configuration, an evaluation's progress line, the result kept from the curve,
// and the mean ± std and target lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CurvePoint } from '../../learner/local/local-run.js';
import type { EvalResult } from '../../learner/eval/evaluate.js';
import type { UpdateMetrics } from '../../learner/train/update-tally.js';
import { evaluationLine, seedResult, seedRunConfig, type SeedResult } from '../../bench/learning-seed.js';
import { comparisonLines, finalsLine, targetSummary } from '../../bench/learning-report.js';
import { learningBenchConfig } from '../../bench/learning-flags.js';
import type { IterationDiagnosis } from '../../bench/learning-diagnostics.js';

const evaluation = (greedy: number, pass1 = 0.5) => ({ greedySuccess: greedy, passAtK: { 'pass@1': pass1 } }) as unknown as EvalResult;
const update = (entropy: number, ppoKl: number) => ({ entropy, ppoKl }) as unknown as UpdateMetrics;
const point = (iteration: number, envSteps: number, extra: Partial<CurvePoint> = {}): CurvePoint => ({
  iteration,
  envSteps,
  trainSuccess: 0.25,
  trainReward: 0.25,
  samples: 64,
  ...extra,
});

test("the loop's configuration: the algorithm's estimator with the preset's options only for the preset's own estimator", () => {
  const s = learningBenchConfig(['learning', '--env', 'FrozenLake', '--estimator-options', '{"gamma":0.5}']);
  const stop = () => false;
  const gigpo = seedRunConfig(s, 'gigpo', 7, stop);
  assert.equal(gigpo.seed, 7);
  assert.equal(gigpo.iterations, 100_000);
  assert.equal(gigpo.evalAtStart, true);
  assert.equal(gigpo.shouldStop, stop);
  assert.deepEqual(gigpo.processing.estimator, { name: 'gigpo', options: { omega: 3, gamma: 0.5 } });
  assert.equal(gigpo.onBatch, undefined);
  const starpo = seedRunConfig(s, 'starpo-s', 7, stop);
  assert.deepEqual(starpo.processing.estimator, { name: 'starpo', options: { gamma: 0.5 } });
  assert.deepEqual(starpo.processing.filters, [{ name: 'starpo_s_variance' }]);
});

test('an evaluation line: env steps, whole seconds, train success, entropy and greedy success; pass@1 when sampled', () => {
  const p = point(9, 640, { eval: evaluation(0.75, 0.5), update: update(0.1234, 0.01) });
  assert.equal(evaluationLine('gigpo', 2, p, 12.6, 0), '  gigpo seed 2: 640 env steps, 13 s, train success 0.250, entropy 0.123, greedy held-out 0.750');
  assert.equal(
    evaluationLine('gigpo', 2, point(-1, 0, { eval: evaluation(0.1, 0.2) }), 0.2, 4),
    '  gigpo seed 2: 0 env steps, 0 s, train success 0.250, entropy -, greedy held-out 0.100, sampled pass@1 0.200',
  );
});

test('a seed result: untrained from iteration −1, final from the last evaluation, the curve at the evaluations only', () => {
  const curve = [point(-1, 0, { eval: evaluation(0.1) }), point(0, 64, { update: update(1, 0.1) }), point(1, 128, { eval: evaluation(0.6, 0.4), update: update(0.9, 0.2) })];
  const run = { algorithm: 'grpo', seed: 3, evalSamples: 2, evalEvery: 2 };
  const diagnoses = [0, 1, 2, 3].map((iteration) => ({ iteration }) as IterationDiagnosis);
  const result = seedResult(run, curve, [0.5, 9.5], 10, diagnoses);
  assert.deepEqual(result, {
    algorithm: 'grpo',
    seed: 3,
    untrained: 0.1,
    final: 0.6,
    curve: [
      { envSteps: 0, seconds: 0.5, greedy: 0.1, sampled: 0.5 },
      { envSteps: 128, seconds: 9.5, greedy: 0.6, sampled: 0.4, entropy: 0.9, ppoKl: 0.2 },
    ],
    seconds: 10,
    diagnosis: [{ iteration: 1 }, { iteration: 3 }],
  });
  assert.deepEqual(Object.keys(result), ['algorithm', 'seed', 'untrained', 'final', 'curve', 'seconds', 'diagnosis']);
  const plain = seedResult({ ...run, evalSamples: 0 }, [point(0, 64)], [], 1);
  assert.ok(Number.isNaN(plain.untrained) && Number.isNaN(plain.final));
  assert.deepEqual(plain.curve, []);
  assert.equal('diagnosis' in plain, false);
});

test('the comparison: mean ± sample std per algorithm, then how many seeds reached the target', () => {
  assert.equal(finalsLine('gigpo', [0.8, 1]), '  gigpo     0.900 ± 0.141   (seeds: 0.800, 1.000)');
  assert.equal(finalsLine('grpo', [0.5]), '  grpo      0.500 ± 0.000   (seeds: 0.500)');
  const result = (algorithm: string, final: number, reachedAt: number | null): SeedResult => ({
    algorithm,
    seed: 1,
    final,
    untrained: 0,
    seconds: 1,
    curve: [{ envSteps: 0, seconds: 0, greedy: 0 }, ...(reachedAt === null ? [] : [{ envSteps: reachedAt, seconds: 1, greedy: 0.95 }])],
  });
  const results = [result('grpo', 0.95, 640), result('grpo', 0.2, null), result('gigpo', 0.95, 320)];
  const summary = targetSummary(results, ['grpo', 'gigpo'], 0.9);
  assert.deepEqual(comparisonLines(results, ['grpo', 'gigpo'], summary, 0.9), [
    '  grpo      0.575 ± 0.530   (seeds: 0.950, 0.200)',
    '  gigpo     0.950 ± 0.000   (seeds: 0.950)',
    '  grpo: 1 of 2 seeds reached 0.9; median env steps never',
    '  gigpo: 1 of 1 seeds reached 0.9; median env steps 320',
  ]);
});
