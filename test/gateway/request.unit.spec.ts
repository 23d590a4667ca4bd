// Unit: the gateway reads requests strictly — every malformed one is an OpenAI-shaped 400 naming the field
// (`param`), and a well-formed one becomes exactly the upstream request it describes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseChatRequest } from '../../gateway/chat-request.js';
import { parseCompletionRequest } from '../../gateway/completion-request.js';
import { parseFinishRequest } from '../../gateway/finish-request.js';
import { OpenAIError } from '../../gateway/openai-error.js';

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra });

function refused(parse: () => unknown, param: string, status = 400): OpenAIError {
  try {
    parse();
  } catch (error) {
    assert.ok(error instanceof OpenAIError, `expected an OpenAIError, got ${String(error)}`);
    assert.equal(error.status, status);
    assert.equal(error.param, param, error.message);
    assert.equal(error.body.error.type, 'invalid_request_error');
    assert.ok(error.body.error.message.includes(param), error.message);
    return error;
  }
  assert.fail(`expected a refusal naming ${param}`);
}

test('a full chat request becomes its upstream request: sampling fields, text parts joined, tools passed through', () => {
  const tools = [{ type: 'function', function: { name: 'look', parameters: {} } }];
  const request = parseChatRequest(
    chat({
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{}' } }] },
        { role: 'tool', content: 'seen', tool_call_id: 'c1' },
      ],
      n: 3,
      temperature: 0.5,
      max_completion_tokens: 12,
      stop: 'END',
      logprobs: true,
      top_logprobs: 2,
      seed: 7,
      tools,
      tool_choice: 'auto',
      stream: true,
      stream_options: { include_usage: true },
      metadata: { trajflow_episode: 'e1' },
    }),
  );
  assert.equal(request.endpoint, 'chat');
  assert.deepEqual(request.upstream.sampling, { n: 3, temperature: 0.5, maxTokens: 12, stop: ['END'], seed: 7, logprobs: true, topLogprobs: 2 });
  assert.deepEqual(request.upstream.passthrough, { tools, tool_choice: 'auto' });
  assert.equal(request.upstream.prompt.kind, 'chat');
  const messages = request.upstream.prompt.kind === 'chat' ? request.upstream.prompt.messages : [];
  assert.equal(messages[1]!.content, 'ab');
  assert.equal(messages[2]!.content, '');
  assert.equal(messages[2]!.toolCalls?.length, 1);
  assert.equal(messages[3]!.toolCallId, 'c1');
  assert.equal(request.stream, true);
  assert.equal(request.includeUsage, true);
  assert.deepEqual(request.metadata, { trajflow_episode: 'e1' });
});

test('every malformed chat field is a 400 naming it', () => {
  refused(() => parseChatRequest([]), 'body');
  refused(() => parseChatRequest({ messages: [{ role: 'user', content: 'x' }] }), 'model');
  refused(() => parseChatRequest(chat({ model: 3 })), 'model');
  refused(() => parseChatRequest(chat({ messages: [] })), 'messages');
  refused(() => parseChatRequest(chat({ messages: 'hi' })), 'messages');
  refused(() => parseChatRequest(chat({ messages: [{ role: 'robot', content: 'x' }] })), 'messages[0].role');
  refused(() => parseChatRequest(chat({ messages: [{ role: 'user' }] })), 'messages[0].content');
  refused(() => parseChatRequest(chat({ messages: [{ role: 'user', content: [{ type: 'image_url' }] }] })), 'messages[0].content[0]');
  refused(() => parseChatRequest(chat({ messages: [{ role: 'user', content: 'x', colour: 1 }] })), 'messages[0].colour');
  refused(() => parseChatRequest(chat({ messages: [{ role: 'tool', content: 'x' }] })), 'messages[0].tool_call_id');
  refused(() => parseChatRequest(chat({ messages: [{ role: 'user', content: 'x', tool_calls: [] }] })), 'messages[0].tool_calls');
  refused(() => parseChatRequest(chat({ n: 0 })), 'n');
  refused(() => parseChatRequest(chat({ n: 1.5 })), 'n');
  refused(() => parseChatRequest(chat({ n: 17 })), 'n');
  refused(() => parseChatRequest(chat({ temperature: 2.5 })), 'temperature');
  refused(() => parseChatRequest(chat({ temperature: '1' })), 'temperature');
  refused(() => parseChatRequest(chat({ max_tokens: 0 })), 'max_tokens');
  refused(() => parseChatRequest(chat({ max_tokens: 5, max_completion_tokens: 6 })), 'max_completion_tokens');
  refused(() => parseChatRequest(chat({ stop: ['a', 'b', 'c', 'd', 'e'] })), 'stop');
  refused(() => parseChatRequest(chat({ stop: ['a', ''] })), 'stop[1]');
  refused(() => parseChatRequest(chat({ logprobs: 'yes' })), 'logprobs');
  refused(() => parseChatRequest(chat({ top_logprobs: 3 })), 'top_logprobs');
  refused(() => parseChatRequest(chat({ logprobs: true, top_logprobs: 21 })), 'top_logprobs');
  refused(() => parseChatRequest(chat({ stream_options: { include_usage: true } })), 'stream_options');
  refused(() => parseChatRequest(chat({ stream: true, stream_options: { other: 1 } })), 'stream_options.other');
  refused(() => parseChatRequest(chat({ metadata: { k: 1 } })), 'metadata.k');
  refused(() => parseChatRequest(chat({ best_of: 2 })), 'best_of');
  refused(() => parseChatRequest(chat({ seed: 0.5 })), 'seed');
});

test('max_tokens and max_completion_tokens may both be sent when they agree', () => {
  assert.equal(parseChatRequest(chat({ max_tokens: 5, max_completion_tokens: 5 })).upstream.sampling.maxTokens, 5);
  assert.equal(parseChatRequest(chat()).upstream.sampling.maxTokens, null);
});

test('a text completion takes one string prompt and an integer logprobs; echo, suffix and prompt lists are refused', () => {
  const request = parseCompletionRequest({ model: 'm', prompt: 'once', logprobs: 2, max_tokens: 4 });
  assert.deepEqual(request.upstream.prompt, { kind: 'text', prompt: 'once' });
  assert.equal(request.upstream.sampling.logprobs, true);
  assert.equal(request.upstream.sampling.topLogprobs, 2);
  assert.equal(parseCompletionRequest({ model: 'm', prompt: 'x' }).upstream.sampling.logprobs, false);
  refused(() => parseCompletionRequest({ model: 'm' }), 'prompt');
  refused(() => parseCompletionRequest({ model: 'm', prompt: ['a', 'b'] }), 'prompt');
  refused(() => parseCompletionRequest({ model: 'm', prompt: 'x', logprobs: 6 }), 'logprobs');
  refused(() => parseCompletionRequest({ model: 'm', prompt: 'x', echo: true }), 'echo');
  refused(() => parseCompletionRequest({ model: 'm', prompt: 'x', suffix: 'y' }), 'suffix');
  refused(() => parseCompletionRequest({ model: 'm', prompt: 'x', messages: [] }), 'messages');
});

test('a finish takes a reward and how the episode ended; a bad one names the field', () => {
  assert.deepEqual(parseFinishRequest({ reward: 1, success: true }).outcome, { reward: 1, turnRewards: [], success: true, terminated: true, truncated: false, reason: 'finish' });
  const cut = parseFinishRequest({ reward: 0, truncated: true, turn_rewards: [0.5, -0.25], run: 'r1' });
  assert.equal(cut.outcome.terminated, false);
  assert.equal(cut.outcome.truncated, true);
  assert.deepEqual(cut.outcome.turnRewards, [0.5, -0.25]);
  assert.equal(cut.run, 'r1');
  refused(() => parseFinishRequest({}), 'reward');
  refused(() => parseFinishRequest({ reward: '1' }), 'reward');
  refused(() => parseFinishRequest({ reward: 1, turn_rewards: [1, null] }), 'turn_rewards[1]');
  refused(() => parseFinishRequest({ reward: 1, terminated: false }), 'terminated');
  refused(() => parseFinishRequest({ reward: 1, score: 2 }), 'score');
});
