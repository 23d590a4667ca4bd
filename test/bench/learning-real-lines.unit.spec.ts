// Unit: what `bench learning --path real` reads from its `trajflow train` (bench/learning-real-lines.ts) — the command
// line, and the held-out curve, updates done and staleness gathered from the evaluator's and learner's lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOTHING_READ, readTrainLine, trainArgs } from '../../bench/learning-real-lines.js';

test('the train command line: the env, seed, updates, run id, evaluation, staleness and port', () => {
  assert.deepEqual(trainArgs({ env: 'FrozenLake', seed: 2, updates: 200, runId: 'bench-x', evalEvery: 10, evalTasks: 100, maxStaleness: 1, port: 4100 }), [
    'train',
    '--env',
    'FrozenLake',
    '--seed',
    '2',
    '--updates',
    '200',
    '--run-id',
    'bench-x',
    '--eval-every',
    '10',
    '--eval-tasks',
    '100',
    '--max-staleness',
    '1',
    '--port',
    '4100',
  ]);
});

test("an evaluator's line adds a curve point at its wall seconds and the random baseline, with a progress line", () => {
  const { read, log } = readTrainLine(NOTHING_READ, 'evaluator: evaluator: v10 held-out 0.420 (random 0.050, 100 tasks, 6400 env steps, 3.2 s)', 61.7, 3);
  assert.deepEqual(read.curve, [{ version: 10, heldOut: 0.42, envSteps: 6400, seconds: 61.7 }]);
  assert.equal(read.random, 0.05);
  assert.equal(log, '  real path seed 3: v10, 6400 env steps, 62 s, held-out 0.420');
  const next = readTrainLine(read, 'evaluator: v20 held-out 0.900 (random 0.050, 100 tasks, 12800 env steps, 3.0 s)', 120, 3);
  assert.deepEqual(
    next.read.curve.map((p) => p.version),
    [10, 20],
  );
  assert.deepEqual(read.curve.length, 1, 'the earlier state is left as it was');
});

test('an evaluation without env steps, and any other line, add no curve point', () => {
  assert.deepEqual(readTrainLine(NOTHING_READ, 'evaluator: v1 held-out 0.100 (random 0.050, 100 tasks, 2.0 s)', 5, 1), { read: NOTHING_READ, log: null });
  assert.deepEqual(readTrainLine(NOTHING_READ, 'actors: 64 episodes', 5, 1), { read: NOTHING_READ, log: null });
});

test("a learner's update line: updates done, the highest staleness, and the stale samples dropped summed", () => {
  const line = (update: number, max: number, dropped: number) =>
    `learner: update ${update} → v${update + 1}  loss 0.1000  entropy 0.500  grad 1.000  64 samples 900 tokens  120 ms  staleness 0.50 (max ${max})  dropped stale ${dropped}`;
  let read = NOTHING_READ;
  for (const [update, max, dropped] of [
    [0, 1, 2],
    [1, 0, 3],
    [2, 1, 0],
  ] as const)
    read = readTrainLine(read, line(update, max, dropped), 1, 1).read;
  assert.equal(read.done, 3);
  assert.equal(read.stalenessMax, 1);
  assert.equal(read.droppedStale, 5);
  assert.equal(read.curve.length, 0);
});
