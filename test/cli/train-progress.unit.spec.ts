// Unit: what `trajflow train` reads from its parts' lines and prints (cli/train/run-progress.ts): the learner's
// updates and version, the evaluator's held-out results (read from the very line the evaluator prints: the newest,
// the best, the first better than random), the actors' iterations to record, and the closing lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunProgress } from '../../cli/train/run-progress.js';
import { evaluationLine } from '../../learner/eval/evaluation-event.js';

const evaluation = (policyVersion: number, envSteps: number, greedySuccess = 0.9375, randomSuccess = 0.4375) =>
  evaluationLine({
    runId: 'r',
    policyVersion,
    trainedIteration: 0,
    envSteps,
    envName: 'Bandit',
    envOptions: '{}',
    tasks: 32,
    greedySuccess,
    meanReward: 0,
    meanSteps: 1,
    randomSuccess,
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
  assert.equal(progress.detail(), 'policy v5, held-out 0.938 at v5 (random 0.438) · best 0.94 at v5 · beat random (0.44) at v5, 320 env steps');
  assert.equal(progress.read('sink', 'learner: update 9 → v10'), null, "only the learner's own lines");
});

test('the detail keeps the best held-out result and the first one above random, whatever came after', () => {
  const progress = new RunProgress(0);
  progress.read('evaluator', evaluation(0, 0, 0.25, 0.29));
  assert.equal(progress.detail(), 'held-out 0.250 at v0 (random 0.290) · best 0.25 at v0', 'not above random yet: no beat-random part');
  progress.read('evaluator', evaluation(60, 21_400, 0.29, 0.29));
  assert.equal(progress.beatRandom, undefined, 'equal to random is not above it');
  progress.read('evaluator', evaluation(70, 24_800, 0.31, 0.29));
  progress.read('evaluator', evaluation(140, 50_200, 0.62, 0.29));
  progress.read('evaluator', evaluation(150, 53_900, 0.62, 0.29));
  progress.read('evaluator', evaluation(160, 57_000, 0.2, 0.29));
  assert.equal(progress.detail(), 'held-out 0.200 at v160 (random 0.290) · best 0.62 at v140 · beat random (0.29) at v70, 24,800 env steps');
  progress.read('learner', 'learner: update 160 → v161  loss 0.1000');
  assert.match(progress.detail(), /^policy v161, held-out 0\.200 at v160/);
});

test('beat random without env steps when the evaluator did not report them', () => {
  const progress = new RunProgress(0);
  progress.read('evaluator', evaluation(3, -1, 0.5, 0.25));
  assert.equal(progress.detail(), 'held-out 0.500 at v3 (random 0.250) · best 0.50 at v3 · beat random (0.25) at v3');
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
