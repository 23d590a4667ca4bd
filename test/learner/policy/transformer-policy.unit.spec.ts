// TransformerPolicy (the batched sampler) on WASM: the same request seed gives the same reply; recorded log-probs are ≤ 0 and equal, within 1e-4, the log-softmax the learner computes for the built sample (at the sampling temperature); replies stop at maxActionsPerTurn words (EOS otherwise); greedy takes the argmax at every token; repeated actBatch calls and created-then-disposed bundles leak no tensors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { createPolicyBundle, disposeBundle, policyOf, type PolicyBundle } from '../../../learner/policy/bundle.js';
import { contextIds } from '../../../learner/policy/context.js';
import { buildBatch } from '../../../learner/train/batch.js';
import { SpecialToken } from '../../../tokenizer/index.js';
import { formatReply } from '../../../envs/actions.js';
import { createEnv } from '../../../envs/registry.js';
import type { HistoryEntry, PolicyReply, PolicyRequest } from '../../../envs/policy/policy.js';
import type { TrainingSampleEvent } from '../../../schemas/index.js';

await selectBackend('wasm');

const bundle: PolicyBundle = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 32, layers: 2, heads: 4, seed: 2 });
test.after(() => disposeBundle(bundle));

/** FrozenLake requests with 0–2 earlier turns, seeds 100 + i. */
function requests(count: number, maxActionsPerTurn = 5): PolicyRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const env = createEnv('FrozenLake');
    let observation = env.reset(500 + i).observation;
    const history: HistoryEntry[] = [];
    for (let turn = 0; turn < i % 3; turn++) {
      const text = formatReply(['Left', 'Down', 'Right'].slice(0, 1 + ((i + turn) % 3)));
      const result = env.step(text);
      history.push({ role: 'observation', text: observation }, { role: 'action', text });
      observation = result.observation;
      if (result.terminated || result.truncated) break;
    }
    return { systemPrompt: env.systemPrompt(), history, observation, seed: 100 + i, actionSpace: { validActions: [...env.validActions()], maxActionsPerTurn } };
  });
}

const contextOf = (request: PolicyRequest) => contextIds(bundle.tokenizer, bundle.vocabulary, request.history, request.observation, request.actionSpace!.maxActionsPerTurn).context;
const wordsOf = (reply: PolicyReply) => reply.tokenIds.filter((id) => id !== SpecialToken.EOS).length;

/** The learner's log π(token | context) at every reply position: buildBatch on the sample of context + reply, then log-softmax(logits / temperature). */
function learnerLogProbs(context: number[], reply: PolicyReply, temperature: number): number[] {
  const tokenIds = [...context, ...reply.tokenIds];
  const lossMask = tokenIds.map((_, i) => (i >= context.length ? 1 : 0));
  const sample: TrainingSampleEvent = {
    sampleId: 's',
    runId: 'r',
    groupId: 'g',
    episodeId: 'e',
    policyVersion: 0,
    tokenIds,
    lossMask,
    advantages: lossMask.map(() => 0),
    behaviourLogProbs: lossMask.map((m, i) => (m ? reply.logProbs[i - context.length]! : 0)),
    reward: 0,
    estimator: 'grpo',
    groupSize: 1,
    groupRewardMean: 0,
    groupRewardStd: 0,
    stepAdvantages: null,
    eventTimeMs: 0,
    batch: null,
  };
  const batch = buildBatch([sample], bundle.head, bundle.model.config.contextLength);
  const logp = tf.tidy(() => {
    const logits = tf.div(bundle.model.logits(tf.tensor2d(batch.ids, [1, batch.time], 'int32'), bundle.head), temperature);
    return tf.logSoftmax(logits).dataSync() as Float32Array;
  });
  const out: number[] = [];
  batch.mask.forEach((m, t) => {
    if (m === 1) out.push(logp[t * bundle.head.size + batch.targets[t]!]!);
  });
  assert.deepEqual(
    Array.from(batch.behaviourLogProbs).filter((_, t) => batch.mask[t] === 1),
    reply.logProbs.map(Math.fround),
  );
  return out;
}

test('the same request seed gives the same reply (text, token ids, log-probs), batched or alone', async () => {
  const policy = policyOf(bundle, 0, { temperature: 1.5 });
  const batch = requests(12);
  const first = policy.actBatch(batch);
  const again = policy.actBatch(batch);
  assert.deepEqual(again, first);
  // Alone, the context is padded differently: same tokens, log-probs equal up to float rounding.
  const alone = await policy.act(batch[5]!);
  assert.deepEqual({ ...alone, logProbs: [] }, { ...first[5]!, logProbs: [] });
  alone.logProbs.forEach((lp, j) => assert.ok(Math.abs(lp - first[5]!.logProbs[j]!) <= 1e-5));
  // Other seeds sample other replies for some requests.
  const reseeded = policy.actBatch(batch.map((r) => ({ ...r, seed: r.seed + 1000 })));
  assert.ok(
    reseeded.some((r, i) => r.text !== first[i]!.text),
    'new seeds change some reply',
  );
});

test("log-probs are ≤ 0 and equal the learner's log-softmax for the built sample, within 1e-4", () => {
  for (const temperature of [1, 0.7]) {
    const policy = policyOf(bundle, 0, { temperature });
    const batch = requests(16);
    const replies = policy.actBatch(batch);
    replies.forEach((reply, i) => {
      assert.equal(reply.logProbs.length, reply.tokenIds.length);
      assert.ok(
        reply.logProbs.every((lp) => lp <= 0 && Number.isFinite(lp)),
        `reply ${i}: ${reply.logProbs}`,
      );
      assert.deepEqual(reply.promptTokenIds, contextOf(batch[i]!).slice(-reply.promptTokenIds!.length));
      const learner = learnerLogProbs(contextOf(batch[i]!), reply, temperature);
      learner.forEach((lp, j) => assert.ok(Math.abs(lp - reply.logProbs[j]!) <= 1e-4, `T=${temperature} reply ${i} token ${j}: sampler ${reply.logProbs[j]} vs learner ${lp}`));
    });
  }
});

test('replies have at most maxActionsPerTurn words, and end with EOS exactly when they stop earlier', () => {
  const policy = policyOf(bundle, 0, { temperature: 5 }); // near uniform: long and short replies
  for (const limit of [1, 2, 5]) {
    const replies = policy.actBatch(requests(40, limit));
    for (const reply of replies) {
      const words = wordsOf(reply);
      assert.ok(words <= limit, `${words} words > ${limit}`);
      const eos = reply.tokenIds.indexOf(SpecialToken.EOS);
      if (words < limit) assert.equal(eos, reply.tokenIds.length - 1, `stops early only with EOS last: ${reply.tokenIds}`);
      else assert.equal(eos, -1, `no EOS after the limit: ${reply.tokenIds}`);
      assert.equal(reply.text.includes('<answer>'), true);
    }
    assert.ok(
      replies.some((r) => wordsOf(r) === limit),
      `some reply reaches the limit ${limit}`,
    );
  }
});

test('greedy takes the most likely reply token at every step', () => {
  const policy = policyOf(bundle, 0, { greedy: true });
  const batch = requests(10);
  const replies = policy.actBatch(batch);
  replies.forEach((reply, i) => {
    const context = contextOf(batch[i]!);
    const ids = [...context, ...reply.tokenIds];
    const logits = tf.tidy(() => bundle.model.logits(tf.tensor2d(ids, [1, ids.length], 'int32'), bundle.head).dataSync() as Float32Array);
    reply.tokenIds.forEach((id, j) => {
      const row = logits.subarray((context.length - 1 + j) * bundle.head.size, (context.length + j) * bundle.head.size);
      const best = row.indexOf(Math.max(...row));
      assert.equal(id, bundle.head.tokenIds[best], `request ${i} token ${j}`);
    });
  });
});

test('no tensor leak: numTensors is the same after several actBatch calls', () => {
  const policy = policyOf(bundle, 0);
  const batch = requests(8);
  policy.actBatch(batch); // caches the causal masks of these lengths
  const before = tf.memory().numTensors;
  for (let i = 0; i < 4; i++) policy.actBatch(batch);
  assert.equal(tf.memory().numTensors, before);
});

test("no tensor leak: a bundle created and disposed leaves no tensor behind (its variables' initial tensors too)", () => {
  const before = tf.memory().numTensors;
  for (let i = 0; i < 3; i++) disposeBundle(createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 16, layers: 1, heads: 2, seed: 5 + i }));
  assert.equal(tf.memory().numTensors, before);
});
