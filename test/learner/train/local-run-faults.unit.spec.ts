// Unit: the faults `bench alerts` stages through runLocal's faultAt change only what they name, from the
// iteration they name: a learning-rate spike that update's rate, a reward-scale bug or a timeout bonus the rewards
// the processors see (not the success), an entropy bonus the loss; before the fault the run is the plain run, update for update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectBackend } from '../../../learner/backend.js';
import { runLocal, type CurvePoint, type LocalRunConfig } from '../../../learner/local/local-run.js';
import type { BatchOutput, RawGroup } from '../../../processors/pipeline/process-batch.js';
import { smallLocalRun } from './helpers.js';

await selectBackend('wasm');

const base: LocalRunConfig = smallLocalRun();
const comparable = (p: CurvePoint) => ({ trainSuccess: p.trainSuccess, samples: p.samples, update: p.update && { ...p.update, durationMs: 0 } });

test('a learning-rate spike at the last iteration: the earlier updates are the plain run, the spiked one runs at 30× the rate', async () => {
  const last = base.iterations - 1;
  const plain = await runLocal(base);
  const spiked = await runLocal({ ...base, faultAt: (i) => (i === last ? { learningRateScale: 30 } : undefined) });
  assert.deepEqual(spiked.slice(0, last).map(comparable), plain.slice(0, last).map(comparable));
  assert.ok(Math.abs(spiked[last]!.update!.learningRate - 30 * plain[last]!.update!.learningRate) < 1e-12);
});

test('a reward-scale bug multiplies the rewards the processors see, not the success; an entropy bonus enters the loss', async () => {
  const seen: BatchOutput[] = [];
  const plainSeen: BatchOutput[] = [];
  const plain = await runLocal({ ...base, onBatch: (_i, _g, out) => plainSeen.push(out) });
  const scaled = await runLocal({ ...base, faultAt: () => ({ rewardScale: 100 }), onBatch: (_i, _g, out) => seen.push(out) });
  assert.equal(scaled[0]!.trainSuccess, plain[0]!.trainSuccess);
  const total = (outs: BatchOutput[]) => outs.reduce((sum, out) => sum + out.stats.rewardMean, 0);
  assert.notEqual(total(plainSeen), 0, 'the plain run has rewards to scale');
  assert.ok(Math.abs(total(seen) - 100 * total(plainSeen)) < 1e-6 * Math.abs(total(seen)));
  const bonus = await runLocal({ ...base, faultAt: () => ({ loss: { entropyCoeff: 2, entropyTarget: null } }) });
  assert.ok(bonus[0]!.update!.entropyLoss < 0 && plain[0]!.update!.entropyLoss === 0, 'the bonus is in the loss');
});

test('a timeout bonus pays the episodes the turn limit cut short, and only those; success is unchanged', async () => {
  const trajectoriesOf = (runs: RawGroup[][]) => runs[0]!.flatMap((g) => g.trajectories);
  const plainGroups: RawGroup[][] = [];
  const paidGroups: RawGroup[][] = [];
  const plain = await runLocal({ ...base, iterations: 1, onBatch: (_i, groups) => plainGroups.push([...groups]) });
  const paid = await runLocal({ ...base, iterations: 1, faultAt: () => ({ timeoutReward: 5 }), onBatch: (_i, groups) => paidGroups.push([...groups]) });
  assert.equal(paid[0]!.trainSuccess, plain[0]!.trainSuccess);
  const before = trajectoriesOf(plainGroups);
  const after = trajectoriesOf(paidGroups);
  assert.ok(before.some((t) => t.outcome === 'truncated') && before.some((t) => t.outcome === 'terminated'), 'the batch has both endings');
  before.forEach((t, i) => {
    assert.equal(after[i]!.success, t.success);
    assert.equal(after[i]!.totalReward, t.totalReward + (t.outcome === 'truncated' ? 5 : 0));
  });
});
