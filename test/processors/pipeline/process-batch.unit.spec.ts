import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trajectoryFromSteps } from '../../../processors/assembly/index.js';
import { batchProcessor } from '../../../processors/pipeline/process-batch.js';
import { validateEvent } from '../../../schemas/index.js';
import { episodeSteps } from '../../../bench/load/episodes.js';

const group = (groupId: string, rewards: number[]) => ({
  groupId,
  trajectories: rewards.map(
    (finalReward, episode) => trajectoryFromSteps(episodeSteps({ runId: 'r', groupId, groupSize: rewards.length, episode, length: 2, finalReward })).trajectory,
  ),
});

test('a batch: equal-reward groups are dropped by dynamic sampling, the rest become valid samples with RLOO advantages', () => {
  const process = batchProcessor({
    reward: { terms: [{ kind: 'env_return' }] },
    estimator: { name: 'rloo' },
    filters: [{ name: 'dynamic_sampling' }],
  });
  const out = process([group('flat', [1, 1, 1]), group('mixed', [1, 0, 0])]);
  assert.deepEqual(out.keptGroupIds, ['mixed']);
  assert.deepEqual(
    out.dropped.map((d) => [d.groupId, d.reason]),
    [['flat', 'all_rewards_equal']],
  );
  assert.equal(out.samples.length, 3);
  // RLOO: r_i minus the mean of the others → 1 − 0 = 1, 0 − 0.5 = −0.5, 0 − 0.5 = −0.5.
  const perEpisode = out.samples.map((s) => s.advantages.find((_, i) => s.lossMask[i] === 1));
  assert.deepEqual(perEpisode, [1, -0.5, -0.5]);
  for (const sample of out.samples) assert.deepEqual(validateEvent('sample', sample), { ok: true });
  assert.equal(out.stats.groups, 2);
  assert.equal(out.stats.droppedGroups, 1);
});

test('the same groups always give the same samples (replay relies on it)', () => {
  const process = batchProcessor({ reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [] });
  const batch = [group('a', [1, 0, 1, 0]), group('b', [0, 0, 1, 1])];
  assert.deepEqual(process(batch).samples, process(batch).samples);
});

test("every sample names its rollout batch: an id from the batch's groups, the actors' iteration, and the batch's sample count", () => {
  const process = batchProcessor({ reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [{ name: 'dynamic_sampling' }] });
  const withIteration = (g: ReturnType<typeof group>, iteration: number) => ({ ...g, trajectories: g.trajectories.map((t) => ({ ...t, metrics: { ...t.metrics, iteration } })) });
  const out = process([withIteration(group('a', [1, 0, 1]), 7), withIteration(group('flat', [0, 0, 0]), 7), withIteration(group('b', [0, 1, 1]), 7)]);
  assert.equal(out.samples.length, 6, 'the flat group was dropped: 6 samples from 2 groups');
  const batches = new Set(out.samples.map((s) => JSON.stringify(s.batch)));
  assert.equal(batches.size, 1, 'one batch for all');
  const batch = out.samples[0]!.batch!;
  assert.equal(batch.iteration, 7);
  assert.equal(batch.samples, 6);
  assert.equal(
    batch.batchId,
    process([withIteration(group('flat', [0, 0, 0]), 7), withIteration(group('b', [0, 1, 1]), 7), withIteration(group('a', [1, 0, 1]), 7)]).samples[0]!.batch!.batchId,
    'the id depends on the groups, not their order',
  );
  for (const sample of out.samples) assert.deepEqual(validateEvent('sample', sample), { ok: true });
  // Trajectories that name no iteration (or different ones) make a batch of iteration -1.
  assert.equal(process([group('a', [1, 0, 1])]).samples[0]!.batch!.iteration, -1);
  assert.equal(process([withIteration(group('a', [1, 0, 1]), 1), withIteration(group('b', [0, 1, 1]), 2)]).samples[0]!.batch!.iteration, -1);
});
