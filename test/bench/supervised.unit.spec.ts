// bench supervised on a tiny model (WASM, seconds): the cross-entropy step learns a fixed labelled batch (loss
// falls, argmax accuracy rises far above its untrained level), the loop's report has an evaluation at the start,
// at every --eval-every and at the end with the training loss falling, and bad flags exit 2 naming the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../learner/backend.js';
import { createPolicyBundle, disposeBundle } from '../../learner/policy/bundle.js';
import { Rng } from '../../core/rng.js';
import { supervisedTask } from '../../bench/supervised-states.js';
import { crossEntropyStep, oneStepAccuracy, trainSupervised } from '../../bench/supervised-train.js';
import { main } from '../../bin/main.js';

await selectBackend('wasm');

const TINY = { width: 16, layers: 1, heads: 2, mlpRatio: 2, contextLength: 32, positionMode: 'grid', attentionSpan: 'turn', gridNeighbours: true, seed: 1 } as const;
const task = supervisedTask('FrozenLake', { slippery: false, maxTurns: 10, maxActionsPerTurn: 1, maxActionsPerEpisode: 10 });

test('crossEntropyStep: 40 steps on 16 labelled FrozenLake states take the loss below 0.6× its start and the accuracy from ≈ chance to ≥ 0.75', () => {
  const rng = new Rng(1, 3);
  const states = Array.from({ length: 16 }, (_, i) => task.draw(100 + i, rng));
  const bundle = createPolicyBundle(task.actionWords, TINY);
  const optimizer = tf.train.adam(1e-2);
  try {
    const before = oneStepAccuracy(bundle, states);
    const steps = Array.from({ length: 40 }, () => crossEntropyStep(bundle, optimizer, states));
    const after = oneStepAccuracy(bundle, states);
    // Untrained, the 5-way head (EOS + 4 moves) spreads evenly: loss ≈ ln 5, accuracy ≈ the share of optimal moves.
    assert.ok(Math.abs(steps[0]!.loss - Math.log(5)) < 0.1, `first loss ${steps[0]!.loss}`);
    assert.ok(before < 0.45, `untrained accuracy ${before}`);
    assert.ok(steps.at(-1)!.loss < 0.6 * steps[0]!.loss, `loss ${steps[0]!.loss} → ${steps.at(-1)!.loss}`);
    assert.ok(after >= 0.75 && after >= before + 0.4, `accuracy ${before} → ${after}`);
  } finally {
    optimizer.dispose();
    disposeBundle(bundle);
  }
});

test('trainSupervised: evaluations at 0, every --eval-every and the end; the ceiling, the budget and a falling training loss', async () => {
  const points: number[] = [];
  const result = await trainSupervised(
    { task, model: TINY, examples: 512, evalEvery: 256, batch: 32, learningRate: 1e-2, evalTasks: 4, evalStates: 16, states: new Rng(1, 3) },
    (p) => points.push(p.examples),
  );
  assert.deepEqual(points, [0, 256, 512]);
  assert.deepEqual(
    result.curve.map((p) => p.examples),
    points,
  );
  assert.equal(result.actionBudget, 10);
  // Every generated map has a path; 4 held-out ones are all within 10 moves.
  assert.equal(result.optimalSuccess, 1);
  for (const p of result.curve) {
    for (const x of [p.greedySuccess, p.stepAccuracy]) assert.ok(x >= 0 && x <= 1 && Number.isInteger(x * 16), `${x}`);
    assert.ok(p.seconds >= 0);
  }
  const [start, middle, end] = result.curve;
  assert.equal(start!.trainLoss, undefined, 'no training before the first evaluation');
  assert.ok(middle!.trainLoss! < Math.log(5) && end!.trainLoss! < middle!.trainLoss!, `training loss ${middle!.trainLoss} → ${end!.trainLoss}`);
  assert.ok(end!.trainAccuracy! > 0 && end!.trainAccuracy! <= 1);
});

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await main(argv), out: out.join('\n'), err: err.join('\n') };
  } finally {
    [console.log, console.error] = [log, error];
  }
}

test('trajflow bench supervised: --help shows its usage; bad flags exit 2 and say what to pass', async () => {
  const help = await run(['bench', 'supervised', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /trajflow bench supervised --env FrozenLake\|Sokoban \[--examples N\]/);
  const cases: [string[], RegExp][] = [
    [['--env', 'Bandit'], /--env Bandit: bench supervised has BFS labels for FrozenLake and Sokoban/],
    [['--examples', '0'], /--examples needs a positive integer, got '0'/],
    [['--lr', 'fast'], /--lr needs a positive number, got 'fast'/],
    [['--model', '{"widht":8}'], /--model: unknown setting "widht"; known: contextLength/],
    [['--eval-every'], /--eval-every needs a value; usage: trajflow bench supervised/],
    [['--nope', '1'], /unknown option '--nope'; usage: trajflow bench supervised/],
  ];
  for (const [flags, message] of cases) {
    const r = await run(['bench', 'supervised', ...flags]);
    assert.equal(r.code, 2, flags.join(' '));
    assert.match(r.err, message);
  }
});
