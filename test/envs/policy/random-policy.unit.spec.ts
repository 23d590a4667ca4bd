import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createEnv, createRandomPolicy, envNames, extractAnswer } from '../../../envs/index.js';
import {
  ActionSpaceRequiredError,
  createRandomPolicyProvider,
  NoValidActionError,
  spreadLogProb,
  UniformRandomPolicy,
  uniformReplyLogProb,
  type PolicyRequest,
} from '../../../envs/policy/index.js';
import { decodeByteTokens } from '../../../tokenizer/contract.js';
import type { PolicyVersionEvent } from '../../../schemas/index.js';

const request = (seed: number, validActions: string[], maxActionsPerTurn: number): PolicyRequest => ({
  systemPrompt: 'play',
  history: [],
  observation: 'obs',
  seed,
  actionSpace: { validActions, maxActionsPerTurn },
});

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

test('replies are the baseline random policy’s, in RAGEN format, byte-tokenized', async () => {
  for (const name of envNames) {
    const env = createEnv(name);
    env.reset(7);
    const reply = await new UniformRandomPolicy().act(request(123, [...env.validActions()], env.maxActionsPerTurn));
    assert.equal(reply.text, createRandomPolicy(123).act(env), name);
    assert.ok(extractAnswer(reply.text).ok, name);
    assert.equal(decodeByteTokens(reply.tokenIds), reply.text);
    assert.equal(reply.logProbs.length, reply.tokenIds.length);
  }
});

test('the log-probs sum to log P(reply) = -log(maxActionsPerTurn) + k·log(1/|V|), each ≤ 0', async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 5 }), async (seed, vocabulary, maxActions) => {
      const actions = Array.from({ length: vocabulary }, (_, i) => `A${i}`);
      const reply = await new UniformRandomPolicy().act(request(seed, actions, maxActions));
      const answer = extractAnswer(reply.text);
      assert.ok(answer.ok);
      const k = answer.value.answer.split('||').length;
      const expected = -Math.log(maxActions) - k * Math.log(vocabulary);
      assert.ok(Math.abs(sum(reply.logProbs) - expected) < 1e-9, `${sum(reply.logProbs)} vs ${expected}`);
      assert.ok(reply.logProbs.every((lp) => lp <= 0 && Number.isFinite(lp)));
    }),
    { numRuns: 200 },
  );
});

test('a single valid action with one action per turn has probability 1 (log-probs all 0)', async () => {
  const reply = await new UniformRandomPolicy().act(request(1, ['Only'], 1));
  assert.equal(reply.text, '<answer>Only</answer>');
  assert.ok(reply.logProbs.every((lp) => lp === 0));
});

test('an action listed twice among the valid actions is twice as likely', () => {
  const space = { validActions: ['a', 'b', 'a'], maxActionsPerTurn: 2 };
  assert.ok(Math.abs(uniformReplyLogProb(['a'], space) - Math.log((1 / 2) * (2 / 3))) < 1e-12);
  assert.ok(Math.abs(uniformReplyLogProb(['b', 'a'], space) - Math.log((1 / 2) * (1 / 3) * (2 / 3))) < 1e-12);
  assert.deepEqual(spreadLogProb(-3, 3), [-1, -1, -1]);
});

test('the same seed gives the same reply; the policy needs the action space', async () => {
  const policy = new UniformRandomPolicy(4);
  assert.equal(policy.version, 4);
  const a = await policy.act(request(99, ['Left', 'Right', 'Up'], 3));
  const b = await policy.act(request(99, ['Left', 'Right', 'Up'], 3));
  assert.deepEqual(a, b);
  await assert.rejects(policy.act({ systemPrompt: '', history: [], observation: '', seed: 1 }), ActionSpaceRequiredError);
  await assert.rejects(policy.act(request(1, [], 1)), NoValidActionError);
});

test('the random provider switches to newer versions only', async () => {
  const provider = createRandomPolicyProvider();
  const version = (v: number): PolicyVersionEvent => ({
    runId: 'r',
    version: v,
    weightsUri: 'none://',
    checksum: '0'.repeat(64),
    parentVersion: null,
    learnerStep: v,
    createdAtMs: 1,
    metrics: {},
  });
  assert.equal(provider.current().version, 0);
  await provider.onVersion(version(2));
  assert.equal(provider.current().version, 2);
  await provider.onVersion(version(1));
  assert.equal(provider.current().version, 2);
});
