// Unit: reading token ids and log-probs from answers in vLLM's response shape. The shapes follow vLLM's
// OpenAI-compatible server protocol (`logprobs`, `return_tokens_as_token_ids` → tokens "token_id:<id>",
// `return_token_ids` → `token_ids` and `prompt_token_ids`):
// https://docs.vllm.ai/en/v0.12.0/api/vllm/entrypoints/openai/protocol/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIError } from '../../gateway/openai-error.js';
import { promptIdsOf, sampledChoiceOf, tokenIdOf } from '../../gateway/vllm-response.js';

const content = (pairs: Array<[string, number]>) => pairs.map(([token, logprob]) => ({ token, logprob, bytes: null, top_logprobs: [{ token, logprob }] }));

test('chat: ids from "token_id:<id>" tokens, log-probs from logprobs.content', () => {
  const choice = sampledChoiceOf(
    {
      index: 0,
      message: { role: 'assistant', content: 'Hi!' },
      logprobs: {
        content: content([
          ['token_id:9906', -0.01],
          ['token_id:0', -1.5],
        ]),
      },
      finish_reason: 'stop',
    },
    0,
    'chat',
  );
  assert.deepEqual(choice.tokenIds, [9906, 0]);
  assert.deepEqual(choice.logProbs, [-0.01, -1.5]);
  assert.equal(choice.text, 'Hi!');
  assert.equal(choice.finishReason, 'stop');
  assert.deepEqual(choice.topLogProbs[1], [{ token: 'token_id:0', logprob: -1.5 }]);
});

test('chat: token_ids (return_token_ids) win over the token strings; tool calls are kept', () => {
  const calls = [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }];
  const choice = sampledChoiceOf(
    {
      message: { content: null, tool_calls: calls },
      token_ids: [4, 5],
      logprobs: {
        content: content([
          ['a', -0.5],
          ['b', 0.0000001],
        ]),
      },
      finish_reason: 'tool_calls',
    },
    0,
    'chat',
  );
  assert.deepEqual(choice.tokenIds, [4, 5]);
  assert.deepEqual(choice.logProbs, [-0.5, 0], 'a rounding above 0 is clamped to 0');
  assert.deepEqual(choice.toolCalls, calls);
  assert.equal(choice.finishReason, 'tool_calls');
});

test('completions: tokens and token_logprobs, prompt ids per choice', () => {
  const body = {
    choices: [{ text: ' cat', prompt_token_ids: [1, 2], logprobs: { tokens: ['token_id:3'], token_logprobs: [-0.2], top_logprobs: [{ 'token_id:3': -0.2 }], text_offset: [0] } }],
  };
  const choice = sampledChoiceOf(body.choices[0], 0, 'text');
  assert.deepEqual([choice.tokenIds, choice.logProbs, choice.text], [[3], [-0.2], ' cat']);
  assert.deepEqual(promptIdsOf(body), [1, 2]);
  assert.deepEqual(promptIdsOf({ prompt_token_ids: [7], choices: [] }), [7]);
  assert.equal(promptIdsOf({ choices: [{}] }), null);
});

test('no token ids is the documented refusal naming the field; no log-probs and mismatched lengths are refused too', () => {
  const missing = (() => {
    try {
      sampledChoiceOf({ message: { content: 'Hi' }, logprobs: { content: content([['Hi', -0.1]]) } }, 1, 'chat');
    } catch (error) {
      return error as OpenAIError;
    }
    return undefined;
  })();
  assert.ok(missing instanceof OpenAIError);
  assert.equal(missing.status, 502);
  assert.equal(missing.code, 'upstream_token_ids_missing');
  assert.match(missing.message, /choices\[1\]\.token_ids is missing/);
  assert.match(missing.message, /nothing was recorded/);
  assert.throws(
    () => sampledChoiceOf({ message: { content: 'Hi' }, token_ids: [1] }, 0, 'chat'),
    (e: OpenAIError) => e.code === 'upstream_logprobs_missing',
  );
  assert.throws(() => sampledChoiceOf({ message: { content: 'Hi' }, token_ids: [1, 2], logprobs: { content: content([['a', -1]]) } }, 0, 'chat'), /has 2 ids but logprobs has 1/);
  assert.throws(() => sampledChoiceOf({ message: {}, token_ids: [-1], logprobs: { content: content([['a', -1]]) } }, 0, 'chat'), /not an array of token ids/);
  assert.equal(tokenIdOf('token_id:12'), 12);
  assert.equal(tokenIdOf('token_id:'), undefined);
  assert.equal(tokenIdOf(' token_id:1'), undefined);
});

test("a choice's stop_reason names the stop string that ended it (a stop token's integer id names none)", () => {
  const raw = (stopReason: unknown, finish = 'stop') => ({
    message: { content: 'ab' },
    token_ids: [1, 2],
    logprobs: {
      content: content([
        ['a', -0.5],
        ['b', -0.25],
      ]),
    },
    finish_reason: finish,
    stop_reason: stopReason,
  });
  assert.equal(sampledChoiceOf(raw('END'), 0, 'chat').stopSequence, 'END');
  assert.equal(sampledChoiceOf(raw(151645), 0, 'chat').stopSequence, undefined);
  assert.equal(sampledChoiceOf(raw(null), 0, 'chat').stopSequence, undefined);
  assert.equal(sampledChoiceOf(raw('END', 'length'), 0, 'chat').stopSequence, undefined);
});
