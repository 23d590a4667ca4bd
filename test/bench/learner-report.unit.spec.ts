// Unit: `bench learner`'s figures (bench/learner-rates.ts, bench/learner-report.ts) — the medians over the
// interleaved rounds, the ratio of each round against the matMuls timed in it, the JSON figures and the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interleavedRates, roundRatio, type RoundTimes } from '../../bench/learner-rates.js';
import { learnerFigures, learnerTableLines } from '../../bench/learner-report.js';

const probes = [
  { shape: '[4×2]·[2×6]', flops: 96 },
  { shape: '[512×512]·[512×512]', flops: 268_435_456 },
];
const batch = { rows: 2, time: 4, tokens: 8, lossTokens: 4 };
const times = (extra: Partial<RoundTimes> = {}): RoundTimes => ({
  probeMs: [
    [1, 3, 2],
    [10, 30, 20],
  ],
  updateMs: [100, 300, 200],
  roundRatios: [0.5, 0.1, 0.3],
  backendMs: [],
  speedups: [],
  ...extra,
});

test("a round's ratio: the update's FLOP/s over the reference's FLOP/s in the same round", () => {
  assert.equal(roundRatio(1000, 10, 100, 2), 2);
  assert.equal(roundRatio(1000, 100, 1000, 100), 1);
});

test("the rates: each probe's and the update's medians, the median of the rounds' ratios; the backend kernels only when compared", () => {
  const rates = interleavedRates(probes, batch, 4e6, times(), false);
  assert.deepEqual(rates.matMul, [
    { shape: '[4×2]·[2×6]', flops: 96, medianMs: 2, flopsPerSec: 48_000 },
    { shape: '[512×512]·[512×512]', flops: 268_435_456, medianMs: 20, flopsPerSec: 268_435_456 / 0.02 },
  ]);
  assert.deepEqual(rates.training, {
    rows: 2,
    time: 4,
    tokens: 8,
    lossTokens: 4,
    flopsPerUpdate: 4e6,
    updateMs: [100, 300, 200],
    medianMs: 200,
    tokensPerSec: 40,
    flopsPerSec: 2e7,
  });
  assert.equal(rates.ratio, 0.3);
  assert.equal('backendKernels' in rates, false);
  const compared = interleavedRates(probes, batch, 4e6, times({ backendMs: [150, 450, 300], speedups: [1.5, 1.5, 1.5] }), true);
  assert.deepEqual(compared.backendKernels, { updateMs: [150, 450, 300], medianMs: 300, speedup: 1.5 });
});

test('the figures and the table: model shapes apart from the 512² square, the ratios, the sampling', () => {
  const measured = interleavedRates(probes, batch, 4e6, times({ backendMs: [150, 450, 300], speedups: [1.5, 1.4, 1.6] }), true);
  const model = { width: 2, layers: 1, heads: 1, mlpRatio: 4, contextLength: 128, vocabSize: 300, replySize: 5 };
  const sampling = { requests: 32, meanContextTokens: 40.4, medianMs: 80, repliesPerSec: 400, tokensPerSec: 1200 };
  const figures = learnerFigures(model, measured, 1, sampling);
  assert.deepEqual(Object.keys(figures), ['model', 'matMul', 'training', 'backendKernels', 'effectiveOverMatMul', 'roundRatios', 'effectiveOverSquare512', 'sampling']);
  assert.equal(figures.matMul.modelShapes.length, 1);
  assert.equal(figures.matMul.square512.shape, '[512×512]·[512×512]');
  assert.equal(figures.matMul.modelShapesFlopsPerSec, 48_000);
  assert.equal(figures.effectiveOverMatMul, 0.3);
  assert.equal(figures.effectiveOverSquare512, 2e7 / (268_435_456 / 0.02));
  const lines = learnerTableLines({ cpus: 2, cpuModel: 'cpu', node: 'v20' }, 'wasm', figures);
  assert.deepEqual(lines.slice(0, 3), [
    'machine: 2 × cpu, node v20; backend wasm',
    'model: width 2, 1 layers, 1 heads, vocab 300, reply head 5',
    'matMul (plain tf.matMul, median):',
  ]);
  assert.equal(lines[3], `  ${'[4×2]·[2×6]'.padEnd(24)}     2.00 ms  0.00 GFLOP/s`);
  assert.equal(lines[6], 'training (PolicyTrainer.update, 2 × 4 tokens, 4 in the loss):');
  assert.equal(lines[7], '  200 ms/update median (100, 300, 200)');
  assert.match(lines[9]!, /^ {2}on the WASM backend's own BatchMatMul\/Identity in the same rounds: 300 ms\/update median \(150, 450, 300\); trajflow's kernels 1\.50× faster/);
  assert.match(lines[10]!, /^ratio effective\/matMul: 0\.30 against the model shapes \(median of the rounds: 0\.50, 0\.10, 0\.30; target ≥ 0\.30\)/);
  assert.equal(lines[11], 'sampling (TransformerPolicy.actBatch, 32 FrozenLake requests, 40 context tokens on average): 80 ms/batch, 400 replies/s, 1,200 generated tokens/s');
  assert.equal(
    learnerTableLines({ cpus: 2, cpuModel: 'cpu', node: 'v20' }, 'cpu', learnerFigures(model, interleavedRates(probes, batch, 4e6, times(), false), 1, sampling)).length,
    11,
  );
});
