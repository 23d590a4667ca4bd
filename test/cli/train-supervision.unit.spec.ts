// Unit: what `trajflow train` does when a part exits (cli/train/supervision.ts): restart it up to MAX_RESTARTS times,
// then stop the run as failed; the learner's clean exit ends the run well; nothing while the run is stopping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RESTARTS, Supervision } from '../../cli/train/supervision.js';

test('a failing part is restarted MAX_RESTARTS times, then the run fails; counts are per part', () => {
  const supervision = new Supervision();
  for (let i = 1; i <= MAX_RESTARTS; i++) {
    assert.deepEqual(supervision.exited('processors', 1, false), { kind: 'restart', line: `trajflow train: processors exited with 1; starting it again (${i}/${MAX_RESTARTS})` });
  }
  assert.deepEqual(supervision.exited('processors', 1, false), {
    kind: 'fail',
    line: `trajflow train: processors exited with 1 ${MAX_RESTARTS + 1} times; stopping the other parts`,
  });
  assert.equal(supervision.exited('sink', null, false).kind, 'restart', 'another part has its own count');
});

test("the learner's clean exit ends the run; the evaluator's is expected; a failing learner is restarted", () => {
  const supervision = new Supervision();
  assert.deepEqual(supervision.exited('learner', 0, false), { kind: 'done' });
  assert.deepEqual(supervision.exited('evaluator', 0, false), { kind: 'ignore' });
  assert.equal(supervision.exited('learner', 1, false).kind, 'restart');
  assert.equal(supervision.exited('actors', 0, false).kind, 'restart', 'actors never finish on their own in a train run');
});

test('while stopping, no exit is acted on', () => {
  const supervision = new Supervision();
  for (const [name, code] of [
    ['learner', 0],
    ['processors', 1],
    ['evaluator', 0],
  ] as const)
    assert.deepEqual(supervision.exited(name, code, true), { kind: 'ignore' });
});
