// Which version samples which iteration when the actors run K iterations ahead, and which versions may go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseVersion, PolicyHistory, samplesBehind, samplingTarget, versionsToEvict, type HeldVersion } from '../../rollout/index.js';
import { UniformRandomPolicy } from '../../envs/policy/index.js';

/** Versions 0…n−1, each trained on as many batches as its number (no batch dropped). */
const consecutive = (n: number): HeldVersion[] => Array.from({ length: n }, (_, v) => ({ version: v, trainedOn: v }));

test('iteration i samples with the version trained on max(0, i − K) batches; K = 0 and no bound: the newest', () => {
  const table: Array<[iteration: number, maxStaleness: number | null, target: number | null]> = [
    [0, 1, 0],
    [1, 1, 0],
    [2, 1, 1],
    [7, 1, 6],
    [1, 3, 0],
    [5, 3, 2],
    [5, 0, null],
    [5, null, null],
  ];
  for (const [iteration, maxStaleness, target] of table) assert.equal(samplingTarget(iteration, maxStaleness), target, `iteration ${iteration}, K ${maxStaleness}`);
  assert.deepEqual([null, 0, 1, 2].map(samplesBehind), [false, false, true, true]);
});

test('the version trained on exactly the target is chosen, even when newer ones are held', () => {
  const held = consecutive(4);
  assert.equal(chooseVersion(held, 0).version, 0);
  assert.equal(chooseVersion(held, 2).version, 2);
  assert.equal(chooseVersion(held, null).version, 3, 'no target: the newest');
  assert.throws(() => chooseVersion([], 0), /no version is held/);
});

test('a batch every filter dropped: the newest version trained on fewer batches, when its successor is held', () => {
  // Version 2 trained batch 1, version 3 trained batch 3 (batch 2 never became an update).
  const held: HeldVersion[] = [
    { version: 1, trainedOn: 1 },
    { version: 2, trainedOn: 2 },
    { version: 3, trainedOn: 4 },
  ];
  assert.equal(chooseVersion(held, 3).version, 2);
  assert.equal(chooseVersion(held, 4).version, 3);
});

test('versions never seen (joined a running learner) or not loaded: the nearest later held version', () => {
  // The initial version 0, then only the learner's newest, version 5, read from the compacted topic.
  const joined: HeldVersion[] = [
    { version: 0, trainedOn: 0 },
    { version: 5, trainedOn: 5 },
  ];
  assert.equal(chooseVersion(joined, 4).version, 5);
  assert.equal(chooseVersion(joined, 0).version, 0);
  // Version 2 failed to load: target 2 takes version 3.
  const failed: HeldVersion[] = [
    { version: 1, trainedOn: 1 },
    { version: 3, trainedOn: 3 },
  ];
  assert.equal(chooseVersion(failed, 2).version, 3);
  // Nothing later is held: the newest.
  assert.equal(chooseVersion([{ version: 1, trainedOn: 1 }], 2).version, 1);
});

test('versions older than the next target’s choice are evicted; the K + 1 newest stay', () => {
  assert.deepEqual(
    versionsToEvict(consecutive(5), 3).map((h) => h.version),
    [0, 1, 2],
  );
  assert.deepEqual(
    versionsToEvict(consecutive(3), 2).map((h) => h.version),
    [0, 1],
  );
  assert.deepEqual(versionsToEvict(consecutive(3), 0), []);
  assert.deepEqual(
    versionsToEvict(consecutive(3), null).map((h) => h.version),
    [0, 1],
    'no target: only the newest is kept',
  );
  assert.deepEqual(versionsToEvict([], 1), []);
});

test('the history keeps what later iterations may ask for, at K = 1: iteration i gets version i − 1', () => {
  const history = new PolicyHistory(new UniformRandomPolicy(0));
  const sampled: number[] = [];
  let loaded = 0;
  for (let iteration = 0; iteration < 5; iteration++) {
    // The furthest the learner can be when iteration i starts: version i (it has trained every batch before i).
    while (loaded < iteration) history.record(new UniformRandomPolicy(++loaded), loaded);
    sampled.push(history.policyFor(samplingTarget(iteration, 1)).version);
    assert.ok(history.versions.length <= 2, `at most K + 1 versions held: ${history.versions.join(', ')}`);
    history.forget(samplingTarget(iteration + 1, 1));
  }
  assert.deepEqual(sampled, [0, 0, 1, 2, 3]);
  assert.deepEqual(history.versions, [4], 'the version the next iteration needs');
  history.record(new UniformRandomPolicy(4), 4);
  assert.deepEqual(history.versions, [4], 'a version not newer than the newest held (a failed load) is ignored');
});
