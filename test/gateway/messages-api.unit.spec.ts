// Unit: Anthropic's Messages API through the gateway, from values alone — a request becomes exactly the chat
// request it describes (system, text blocks, tool_use / tool_result, tools, tool_choice, stop_sequences), every
// malformed or unsupported one is a 400 naming the field, a recorded call becomes the message and the event
// stream in Anthropic's order, and errors take Anthropic's shape and types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeStep } from '../../bench/load/events.js';
import { anthropicErrorBody, anthropicTypeOf } from '../../gateway/anthropic-error.js';
import { answerOf, checkAnswerable } from '../../gateway/answer.js';
import { parseMessagesRequest } from '../../gateway/messages-request.js';
import { OpenAIError } from '../../gateway/openai-error.js';
import type { RecordedCall } from '../../gateway/recorder.js';
import type { SampledChoice, UpstreamAnswer } from '../../gateway/upstream.js';

function refused(body: unknown, param: string): void {
  try {
    parseMessagesRequest(body);
  } catch (error) {
    assert.ok(error instanceof OpenAIError, String(error));
    assert.deepEqual([error.status, error.param], [400, param], error.message);
    assert.ok(error.message.startsWith(`${param}:`), error.message);
    return;
  }
  assert.fail(`expected a refusal naming ${param}`);
}

const choice = (over: Partial<SampledChoice> = {}): SampledChoice => ({
  text: 'hello',
  tokenIds: [5, 6, 7],
  logProbs: [-0.25, -1.5, -0.5],
  tokens: ['he', 'll', 'o'],
  topLogProbs: [[], [], []],
  finishReason: 'stop',
  toolCalls: null,
  ...over,
});

const answer = (c: SampledChoice): UpstreamAnswer => ({
  model: 'm',
  policyVersion: 0,
  promptText: 'user: hi',
  promptTokenIds: [1, 2],
  promptScope: 'turn',
  choices: [c],
  usage: { promptTokens: 2, completionTokens: c.tokenIds.length },
  info: {},
});

const recorded = (c: SampledChoice): RecordedCall => ({
  callId: 'msg_abc',
  answer: answer(c),
  steps: [makeStep({})],
  timing: { upstreamMs: 0, barrierMs: 0, watermarksMs: 0, barrierWaitMs: 0, publishMs: 0, recordMs: 0 },
});
const request = (extra: Record<string, unknown> = {}) => parseMessagesRequest({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...extra });
const body = (c: SampledChoice, extra: Record<string, unknown> = {}) => (answerOf(request(extra), recorded(c)) as { body: ReturnType<typeof JSON.parse> }).body;

test('system, text blocks, tool_use and tool_result become the chat messages, in order', () => {
  const parsed = parseMessagesRequest({
    model: 'm',
    max_tokens: 64,
    system: [
      { type: 'text', text: 'be ' },
      { type: 'text', text: 'brief', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      { role: 'user', content: 'look around' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'I will look' },
          { type: 'tool_use', id: 'toolu_1', name: 'look', input: { dir: 'n' } },
          { type: 'tool_use', id: 'toolu_2', name: 'look', input: { dir: 's' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a wall' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'a door' }], is_error: false },
          { type: 'text', text: 'go ' },
          { type: 'text', text: 'on' },
        ],
      },
    ],
  });
  assert.equal(parsed.endpoint, 'messages');
  assert.deepEqual(parsed.upstream.prompt, {
    kind: 'chat',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'look around' },
      {
        role: 'assistant',
        content: 'I will look',
        toolCalls: [
          { id: 'toolu_1', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'look', arguments: '{"dir":"s"}' } },
        ],
      },
      { role: 'tool', content: 'a wall', toolCallId: 'toolu_1' },
      { role: 'tool', content: 'a door', toolCallId: 'toolu_2' },
      { role: 'user', content: 'go on' },
    ],
  });
  assert.deepEqual(parsed.metadata, {}, 'the episode comes from the headers');
});

test('sampling fields, tools and tool_choice take chat completions’ shape', () => {
  const parsed = request({
    temperature: 0.7,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ['END'],
    stream: true,
    tools: [{ name: 'look', description: 'look around', input_schema: { type: 'object', properties: {} } }],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    metadata: { user_id: 'u1' },
    thinking: { type: 'disabled' },
  });
  assert.deepEqual(parsed.upstream.sampling, { n: 1, temperature: 0.7, maxTokens: 16, stop: ['END'], seed: null, logprobs: false, topLogprobs: 0 });
  assert.deepEqual(parsed.upstream.passthrough, {
    top_p: 0.9,
    top_k: 40,
    tools: [{ type: 'function', function: { name: 'look', description: 'look around', parameters: { type: 'object', properties: {} } } }],
    tool_choice: 'required',
    parallel_tool_calls: false,
  });
  assert.equal(parsed.stream, true);
  assert.deepEqual(request({ tool_choice: { type: 'tool', name: 'look' } }).upstream.passthrough, { tool_choice: { type: 'function', function: { name: 'look' } } });
  assert.deepEqual(request({ tool_choice: { type: 'none' } }).upstream.passthrough, { tool_choice: 'none' });
});

test('a malformed or unsupported Messages request is a 400 naming the field', () => {
  const base = { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  refused({ ...base, max_tokens: undefined }, 'max_tokens');
  refused({ ...base, messages: [] }, 'messages');
  refused({ ...base, temperature: 1.5 }, 'temperature');
  refused({ ...base, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role');
  refused({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }, 'messages[0].content[0]');
  refused({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }, 'messages[0].content[0]');
  refused({ ...base, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }] }, 'messages[0].content[0]');
  refused({ ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'b', input: 'x' }] }] }, 'messages[0].content[0].input');
  refused({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages[0].content[0].tool_use_id');
  refused({ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type');
  refused({ ...base, tools: [{ name: 'look' }] }, 'tools[0].input_schema');
  refused({ ...base, tool_choice: { type: 'sometimes' } }, 'tool_choice');
  refused({ ...base, thinking: { type: 'enabled', budget_tokens: 1024 } }, 'thinking');
  refused({ ...base, metadata: { trajflow_episode: 'e' } }, 'metadata.trajflow_episode');
  refused({ ...base, stop_sequences: [''] }, 'stop_sequences[0]');
  refused({ ...base, container: 'c' }, 'container');
});

test('a recorded call is one message: text and tool_use blocks, the stop reason of its finish, usage', () => {
  const plain = body(choice());
  assert.deepEqual(plain, {
    id: 'msg_abc',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [{ type: 'text', text: 'hello', citations: null }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 2, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });
  const calls = [{ id: 'call_9', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } }];
  const used = body(choice({ text: '', toolCalls: calls, finishReason: 'tool_calls' }));
  assert.deepEqual([used.content, used.stop_reason], [[{ type: 'tool_use', id: 'call_9', name: 'look', input: { dir: 'n' } }], 'tool_use']);
  assert.equal(body(choice({ finishReason: 'length' })).stop_reason, 'max_tokens');
  const stopped = body(choice({ stopSequence: 'END' }), { stop_sequences: ['END'] });
  assert.deepEqual([stopped.stop_reason, stopped.stop_sequence], ['stop_sequence', 'END']);
});

test('tool call arguments that are not a JSON object cannot be a tool_use block: a 502 before anything is recorded', () => {
  const bad = answer(choice({ toolCalls: [{ id: 'c', type: 'function', function: { name: 'look', arguments: '[1, 2' } }] }));
  assert.throws(
    () => checkAnswerable(request(), bad),
    (error: unknown) => error instanceof OpenAIError && error.status === 502 && /tool_calls\[0\]\.function\.arguments/.test(error.message),
  );
  checkAnswerable(request(), answer(choice()));
});

test('the event stream comes in Anthropic’s order and its deltas add up to the message', () => {
  const calls = [{ id: 'call_9', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } }];
  const reply = answerOf(request({ stream: true }), recorded(choice({ toolCalls: calls, finishReason: 'tool_calls' })));
  assert.ok(reply.stream);
  const events = reply.events.map((e) => {
    const data = JSON.parse(e.data) as { type: string; [key: string]: ReturnType<typeof JSON.parse> };
    assert.equal(e.event, data.type);
    return data;
  });
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  const start = events[0]!.message;
  assert.deepEqual([start.id, start.content, start.stop_reason, start.usage.input_tokens], ['msg_abc', [], null, 2]);
  assert.deepEqual(
    events.filter((e) => e.type === 'content_block_start').map((e) => e.index),
    [0, 1],
  );
  assert.deepEqual(events[2]!.delta, { type: 'text_delta', text: 'hello' });
  assert.deepEqual(JSON.parse(events[5]!.delta.partial_json), { dir: 'n' });
  assert.deepEqual(events[7]!.delta, { stop_reason: 'tool_use', stop_sequence: null });
  assert.equal(events[7]!.usage.output_tokens, 3);
});

test('errors in Anthropic’s shape: its type from the status, the message naming the field', () => {
  assert.deepEqual(anthropicErrorBody(new OpenAIError(400, 'messages[0].role: must be user or assistant', 'invalid_request_error', 'messages[0].role')), {
    type: 'error',
    error: { type: 'invalid_request_error', message: 'messages[0].role: must be user or assistant' },
  });
  assert.deepEqual([401, 403, 404, 409, 413, 415, 429, 500, 502, 503].map(anthropicTypeOf), [
    'authentication_error',
    'permission_error',
    'not_found_error',
    'invalid_request_error',
    'request_too_large',
    'invalid_request_error',
    'rate_limit_error',
    'api_error',
    'api_error',
    'api_error',
  ]);
});
