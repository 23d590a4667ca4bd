// Unit: what `trajflow train` reads from its parts' lines and prints (cli/train/run-progress.ts): the learner's
// updates and version, the evaluator's held-out result (read from the very line the evaluator prints), the actors'
// iterations to record, and the closing lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunProgress } from '../../cli/train/run-progress.js';
import { evaluationLine } from '../../learner/eval/evaluation-event.js';

const evaluation = (policyVersion: number, envSteps: number) =>
  evaluationLine({
    runId: 'r',
    policyVersion,
    trainedIteration: 0,
    envSteps,
    envName: 'Bandit',
    envOptions: '{}',
    tasks: 32,
    greedySuccess: 0.9375,
    meanReward: 0,
    meanSteps: 1,
    randomSuccess: 0.4375,
    durationMs: 900,
    eventTimeMs: 0,
  });

test('learner and evaluator lines move the progress line; its detail names the newest version and held-out result', () => {
  const progress = new RunProgress(0);
  assert.equal(progress.read('learner', 'learner: backend wasm'), null);
  assert.equal(progress.read('learner', 'learner: update 4 → v5  loss 0.1000  entropy 0.693'), 'progress');
  assert.equal(progress.updates, 5, "updates count from 0 in the learner's lines");
  assert.equal(progress.detail(), 'policy v5');
  assert.equal(progress.read('evaluator', evaluation(5, 320)), 'progress');
  assert.equal(progress.detail(), 'policy v5, held-out 0.938 at v5 (random 0.438)');
  assert.equal(progress.read('sink', 'learner: update 9 → v10'), null, "only the learner's own lines");
});

test('actors: a later iteration is recorded, an earlier or repeated one is not', () => {
  const progress = new RunProgress(3);
  assert.equal(progress.lastIteration, 2, 'resumed after iterations 0–2');
  assert.equal(progress.read('actors', 'actors: iteration 2 started'), null);
  assert.equal(progress.read('actors', 'actors: iteration 3 started'), 'iteration');
  assert.equal(progress.read('actors', 'actors: iteration 3 done'), null);
  assert.equal(progress.lastIteration, 3);
});

test('closing lines: where the actors stopped, and the held-out result with env steps when the evaluator reported them', () => {
  const progress = new RunProgress(0);
  assert.equal(progress.summaryLine('r', 5000), undefined, 'never evaluated: no summary');
  progress.read('actors', 'actors: iteration 9 started');
  progress.read('evaluator', evaluation(10, 640));
  assert.equal(progress.stoppedLine('r'), 'trajflow train: stopped run r (actors reached iteration 9)');
  assert.equal(progress.summaryLine('r', 61_400), 'trajflow train: run r — held-out success 0.938 (random policy 0.438) at v10, 640 env steps, 61 s');
  progress.read('evaluator', evaluation(11, -1));
  assert.equal(progress.summaryLine('r', 1000), 'trajflow train: run r — held-out success 0.938 (random policy 0.438) at v11, 1 s');
});
