// Unit: runLocal's optional RAGEN-2 cross-scoring (what `bench collapse` feeds the template_collapse_mi
// detector) is measured before every `every`-th update and changes nothing else: the same seed gives the
// same rollouts and updates with or without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectBackend } from '../../../learner/backend.js';
import { runLocal, type CurvePoint, type LocalRunConfig } from '../../../learner/local/local-run.js';
import { smallLocalRun } from './helpers.js';

await selectBackend('wasm');

const base: LocalRunConfig = smallLocalRun();

const comparable = (curve: CurvePoint[]) => curve.map((p) => ({ trainSuccess: p.trainSuccess, samples: p.samples, update: p.update && { ...p.update, durationMs: 0 } }));

test('cross-scoring every 2nd update: measured at updates 0 and 2, finite, and the run is otherwise identical', async () => {
  const plain = await runLocal(base);
  const measured = await runLocal({ ...base, templateCollapse: { every: 2, pairs: 8, turns: 'uniform' } });
  assert.deepEqual(comparable(measured), comparable(plain));
  assert.deepEqual(
    measured.map((p) => p.template !== undefined),
    [true, false, true],
  );
  assert.ok(plain.every((p) => p.template === undefined));
  for (const p of measured.filter((q) => q.template)) {
    const t = p.template!;
    assert.ok(t.prompts >= 2 && t.pairs >= 2, `prompts ${t.prompts}, pairs ${t.pairs}`);
    assert.ok(Number.isFinite(t.mutualInformation) && t.miUpperBound > 0, JSON.stringify({ mi: t.mutualInformation, upper: t.miUpperBound }));
  }
});
