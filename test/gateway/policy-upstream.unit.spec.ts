// Unit: trajflow's own policy behind the Upstream seam — how a chat becomes the policy's request, that the
// answer carries exactly the ids and log-probs the policy sampled, that the current version is read per
// call (hot swap), and what it refuses rather than record a distribution it did not sample from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPolicyProvider, type Policy, type PolicyRequest } from '../../envs/policy/index.js';
import { parseChatRequest } from '../../gateway/chat-request.js';
import { parseCompletionRequest } from '../../gateway/completion-request.js';
import type { OpenAIError } from '../../gateway/openai-error.js';
import { PolicyUpstream, renderForPolicy } from '../../gateway/policy-upstream.js';
import { SpecialToken, trajflowTokenizer } from '../../tokenizer/index.js';

const tokenizer = trajflowTokenizer();
const left = tokenizer.singleTokenId(' Left') ?? tokenizer.singleTokenId('Left')!;

/** A policy that answers "Left" then EOS with made-up log-probs, and remembers what it was asked. */
function fakePolicy(version: number, seen: PolicyRequest[] = []): Policy {
  return {
    version,
    act: async (request) => {
      seen.push(request);
      return {
        text: '<answer>Left</answer>',
        tokenIds: [left, SpecialToken.EOS],
        logProbs: [-0.25 - request.seed / 1000, -0.125],
        promptTokenIds: [SpecialToken.OBS, 42, SpecialToken.ACT],
      };
    },
  };
}

function upstreamWith(policy: Policy) {
  const provider = createPolicyProvider({ initial: policy, load: (event) => fakePolicy(event.version) });
  const upstream = new PolicyUpstream({
    provider,
    tokenizer,
    model: 'trajflow-policy',
    actionWords: ['Left', 'Right'],
    maxActionsPerTurn: 2,
    temperature: 1,
    randomSeed: () => 100,
  });
  return { provider, upstream };
}

const chat = (extra: Record<string, unknown> = {}) =>
  parseChatRequest({
    model: 'trajflow-policy',
    messages: [
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'map 1' },
      { role: 'assistant', content: '<answer>Left</answer>' },
      { role: 'user', content: 'map 2' },
    ],
    ...extra,
  }).upstream;

test('the chat is rendered as system prompt, history and the observation to act on', () => {
  assert.deepEqual(renderForPolicy(chat()), {
    systemPrompt: 'rules',
    history: [
      { role: 'observation', text: 'map 1' },
      { role: 'action', text: '<answer>Left</answer>' },
    ],
    observation: 'map 2',
  });
  assert.deepEqual(renderForPolicy(parseCompletionRequest({ model: 'm', prompt: 'p' }).upstream), { systemPrompt: '', history: [], observation: 'p' });
  assert.throws(
    () =>
      renderForPolicy(
        parseChatRequest({
          model: 'm',
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
          ],
        }).upstream,
      ),
    (e: OpenAIError) => e.param === 'messages',
  );
});

test('the answer is exactly what the policy sampled: ids, log-probs, its prompt ids and version; n choices, seeds in order', async () => {
  const seen: PolicyRequest[] = [];
  const { upstream } = upstreamWith(fakePolicy(0, seen));
  const answer = await upstream.complete(chat({ n: 2, seed: 5, max_tokens: 1 }));
  assert.equal(answer.policyVersion, 0);
  assert.equal(answer.promptScope, 'turn');
  assert.deepEqual(answer.promptTokenIds, [SpecialToken.OBS, 42, SpecialToken.ACT]);
  assert.equal(answer.promptText, 'map 2');
  assert.deepEqual(
    answer.choices.map((c) => [c.tokenIds, c.logProbs, c.text]),
    [
      [[left, SpecialToken.EOS], [-0.255, -0.125], '<answer>Left</answer>'],
      [[left, SpecialToken.EOS], [-0.256, -0.125], '<answer>Left</answer>'],
    ],
  );
  assert.deepEqual(answer.choices[0]!.tokens, [tokenizer.decode([left]), '<eos>']);
  assert.deepEqual(
    seen.map((r) => [r.seed, r.actionSpace?.maxActionsPerTurn]),
    [
      [5, 1],
      [6, 1],
    ],
    'max_tokens bounds the words of a reply',
  );
  assert.equal(answer.info.seed, '5');
});

test('a new policy version takes over for the next call', async () => {
  const { provider, upstream } = upstreamWith(fakePolicy(0));
  assert.equal((await upstream.complete(chat())).policyVersion, 0);
  await provider.onVersion({ runId: 'r', version: 3 } as Parameters<typeof provider.onVersion>[0]);
  assert.equal((await upstream.complete(chat())).policyVersion, 3);
});

test('what the own policy cannot sample is refused, naming the field', async () => {
  const { upstream } = upstreamWith(fakePolicy(0));
  await assert.rejects(upstream.complete(chat({ temperature: 0.7 })), (e: OpenAIError) => e.param === 'temperature' && e.status === 400);
  await assert.rejects(upstream.complete(chat({ stop: ['x'] })), (e: OpenAIError) => e.param === 'stop');
  await assert.rejects(upstream.complete(chat({ top_p: 0.9 })), (e: OpenAIError) => e.param === 'top_p');
  assert.equal((await upstream.complete(chat({ temperature: 1 }))).choices.length, 1, 'its own temperature is fine');
});
