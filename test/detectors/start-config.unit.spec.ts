// The detectors' start config (detectors/start-config.ts) and what the rebuild replays: the group (per run when one is watched), the
// topics read (trajectories only when a detector of them is on), and the committed ranges worth replaying.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildDetectorsConfig, WITHOUT_TRAJECTORIES } from '../../detectors/config.js';
import { buildDetectorsStartConfig } from '../../detectors/start-config.js';
import { replayEnds } from '../../detectors/rebuild.js';
import { detectorInputOf } from '../../detectors/detector-input.js';
import { learnerStepEvent } from './synthetic.js';

const config = { topicPrefix: 'tf' };

test('one group per prefix, or per watched run; learner steps and rollout statistics read, alerts written', () => {
  const detectors = buildDetectorsConfig(WITHOUT_TRAJECTORIES);
  const s = buildDetectorsStartConfig(config, detectors, {});
  assert.equal(s.groupId, 'tf.detectors');
  assert.deepEqual(s.inputTopics, ['tf.learner.steps', 'tf.rollout.stats']);
  assert.equal(s.topics.alerts, 'tf.alerts');
  assert.equal(buildDetectorsStartConfig(config, detectors, { runId: 'r1' }).groupId, 'tf.detectors.r1');
  assert.equal(buildDetectorsStartConfig(config, detectors, { runId: 'r1', consumerGroupId: 'g' }).groupId, 'g');
});

test('trajectories are read only when template collapse or action repetition is on', () => {
  const on = buildDetectorsConfig({ templateCollapse: { enabled: true } });
  assert.deepEqual(buildDetectorsStartConfig(config, on, { topics: { trajectories: 'traj' } }).inputTopics, ['tf.learner.steps', 'tf.rollout.stats', 'traj']);
});

test('the rebuild replays the partitions whose commit lies past their first offset, up to the commit', () => {
  const lows = new Map([
    [0, 0n],
    [1, 50n],
    [2, 0n],
  ]);
  assert.deepEqual(
    replayEnds(
      [
        { partition: 0, offset: '12' },
        { partition: 1, offset: '50' },
        { partition: 2, offset: '-1' },
      ],
      lows,
    ),
    { 0: 12n },
  );
  assert.equal(replayEnds([{ partition: 2, offset: '-1' }], lows), null, 'no commit: nothing to replay');
});

test("events the detectors do not read, and other runs' when one is watched, feed nothing", () => {
  const step = { event: 'learner_step', value: learnerStepEvent('r', 1) } as const;
  assert.equal(detectorInputOf(step, 't/0')?.type, 'learner_step');
  assert.equal(detectorInputOf(step, 't/0', 'other'), null);
  assert.equal(detectorInputOf({ event: 'policy_version', value: {} } as never, 't/0'), null);
});
