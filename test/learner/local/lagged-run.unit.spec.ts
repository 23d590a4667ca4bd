// Unit: runLocal with maxStaleness K plays iteration i with the weights after update max(0, i − K), as the
// actors sample it through Kafka; iteration 0 (the initial weights, copied) is the same as at K = 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectBackend } from '../../../learner/backend.js';
import { runLocal, type CurvePoint, type LocalRunConfig } from '../../../learner/local/local-run.js';
import type { TrainingSampleEvent } from '../../../schemas/index.js';
import { smallLocalRun } from '../train/helpers.js';

await selectBackend('wasm');

const base: LocalRunConfig = smallLocalRun({ groups: 2, evalTasks: 1 });

/** The run's samples by iteration and its curve. */
async function run(config: LocalRunConfig): Promise<{ samples: TrainingSampleEvent[][]; curve: CurvePoint[] }> {
  const samples: TrainingSampleEvent[][] = [];
  const curve = await runLocal({ ...config, onBatch: (iteration, _, out) => (samples[iteration] = out.samples) });
  return { samples, curve };
}

const comparable = (p: CurvePoint) => ({ trainSuccess: p.trainSuccess, samples: p.samples, update: p.update && { ...p.update, durationMs: 0 } });

test('maxStaleness 1: iteration i sampled with version max(0, i − 1); iteration 0 as at maxStaleness 0', async () => {
  const lagged = await run({ ...base, maxStaleness: 1 });
  const now = await run(base);
  assert.deepEqual(
    lagged.samples.map((batch) => [...new Set(batch.map((s) => s.policyVersion))]),
    [[0], [0], [1]],
  );
  assert.deepEqual(
    now.samples.map((batch) => [...new Set(batch.map((s) => s.policyVersion))]),
    [[0], [1], [2]],
  );
  assert.deepEqual(lagged.samples[0], now.samples[0], 'the copied initial weights sample as the live ones');
  assert.deepEqual(comparable(lagged.curve[0]!), comparable(now.curve[0]!));
  assert.equal(lagged.curve.length, 3);
});

test('maxStaleness must be an integer ≥ 0', async () => {
  for (const bad of [-1, 1.5]) await assert.rejects(runLocal({ ...base, maxStaleness: bad }), /maxStaleness=.* must be an integer ≥ 0/);
});
