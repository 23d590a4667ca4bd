// Shared pieces of the learner's train specs: small policy bundles and synthetic training samples.
import assert from 'node:assert/strict';
import { createPolicyBundle, type PolicyBundle } from '../../../learner/policy/bundle.js';
import type { LocalRunConfig } from '../../../learner/local/local-run.js';
import { buildBatch, type TrainingBatch } from '../../../learner/train/batch.js';
import type { UpdateMetrics } from '../../../learner/train/trainer.js';
import { Rng } from '../../../core/rng.js';
import type { TrainingSampleEvent } from '../../../schemas/index.js';

/** A small FrozenLake-vocabulary policy (width 32, 2 layers, 4 heads). */
export function smallBundle(seed = 1): PolicyBundle {
  return createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 32, layers: 2, heads: 4, contextLength: 64, seed });
}

/**
 * `rows` samples of `length` tokens: turns of 5 observation ids (any id) then 3 reply ids in the loss, with
 * one advantage per sample (of both signs) and behaviour log-probs around log(1/5).
 */
export function syntheticSamples(bundle: PolicyBundle, rows: number, length: number, seed = 3): TrainingSampleEvent[] {
  const rng = new Rng(seed);
  const reply = bundle.head.tokenIds;
  return Array.from({ length: rows }, (_, r) => {
    const advantage = Math.fround(r % 2 === 0 ? 0.5 + rng.next() : -0.5 - rng.next());
    const tokenIds: number[] = [];
    const lossMask: number[] = [];
    for (let t = 0; t < length; t++) {
      const inReply = t % 8 >= 5;
      tokenIds.push(inReply ? reply[Math.floor(rng.next() * reply.length)]! : 5 + Math.floor(rng.next() * (bundle.tokenizer.vocabSize - 5)));
      lossMask.push(inReply ? 1 : 0);
    }
    return {
      sampleId: `s${r}`,
      runId: 'test',
      groupId: 'g',
      episodeId: `e${r}`,
      policyVersion: 0,
      tokenIds,
      lossMask,
      advantages: lossMask.map((m) => (m ? advantage : 0)),
      behaviourLogProbs: lossMask.map((m) => (m ? Math.fround(Math.log(0.2) + 0.1 * (rng.next() - 0.5)) : 0)),
      reward: advantage,
      estimator: 'grpo',
      groupSize: rows,
      groupRewardMean: 0,
      groupRewardStd: 1,
      stepAdvantages: null,
      eventTimeMs: 0,
      batch: null,
    };
  });
}

export function syntheticBatch(bundle: PolicyBundle, rows = 6, length = 33, seed = 3): TrainingBatch {
  return buildBatch(syntheticSamples(bundle, rows, length, seed), bundle.head, bundle.model.config.contextLength);
}

/** Every parameter's values, by name. */
export async function weightsOf(bundle: PolicyBundle): Promise<Map<string, Float32Array>> {
  return bundle.model.values();
}

export function assertSameWeights(a: Map<string, Float32Array>, b: Map<string, Float32Array>, label: string): void {
  assert.deepEqual([...a.keys()], [...b.keys()], `${label}: parameter names`);
  for (const [name, values] of a) assert.deepEqual(values, b.get(name), `${label}: ${name}`);
}

/** The metrics without the wall-clock duration. */
export function withoutDuration(m: UpdateMetrics): Omit<UpdateMetrics, 'durationMs'> {
  const { durationMs: _, ...rest } = m;
  return rest;
}

/** A small, fast in-process FrozenLake run (GRPO, a one-layer width-32 policy, no evaluation until iteration 100). */
export function smallLocalRun(overrides: Partial<LocalRunConfig> = {}): LocalRunConfig {
  return {
    env: 'FrozenLake',
    iterations: 3,
    groups: 4,
    groupSize: 4,
    processing: { reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [] },
    model: { width: 32, layers: 1, heads: 2 },
    optimizer: { learningRate: 1e-3 },
    seed: 5,
    evalEvery: 100,
    evalTasks: 4,
    ...overrides,
  };
}
