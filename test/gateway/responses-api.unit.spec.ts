// Unit: OpenAI's Responses API through the gateway, from values alone — a request becomes exactly the chat
// request it describes (instructions, input items, function calls and their outputs, tools, text.format), every
// malformed or unsupported one is an OpenAI-shaped 400 naming the field, and a recorded call becomes the response
// object and the event stream in OpenAI's order, whose deltas add up to that object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerOf } from '../../gateway/answer.js';
import { OpenAIError } from '../../gateway/openai-error.js';
import type { RecordedCall } from '../../gateway/recorder.js';
import { parseResponsesRequest } from '../../gateway/responses-request.js';
import type { SampledChoice, UpstreamAnswer } from '../../gateway/upstream.js';
import { makeStep } from '../../bench/load/events.js';

function refused(body: unknown, param: string): OpenAIError {
  try {
    parseResponsesRequest(body);
  } catch (error) {
    assert.ok(error instanceof OpenAIError, String(error));
    assert.deepEqual([error.status, error.param, error.body.error.type], [400, param, 'invalid_request_error'], error.message);
    assert.ok(error.message.startsWith(`${param}:`), error.message);
    return error;
  }
  assert.fail(`expected a refusal naming ${param}`);
}

const choice = (over: Partial<SampledChoice> = {}): SampledChoice => ({
  text: 'héllo',
  tokenIds: [5, 6],
  logProbs: [-0.25, -1.5],
  tokens: ['hé', 'llo'],
  topLogProbs: [[{ token: 'hé', logprob: -0.25 }], [{ token: 'llo', logprob: -1.5 }]],
  finishReason: 'stop',
  toolCalls: null,
  ...over,
});

const answer = (c: SampledChoice): UpstreamAnswer => ({
  model: 'm',
  policyVersion: 3,
  promptText: 'user: hi',
  promptTokenIds: [1, 2],
  promptScope: 'conversation',
  choices: [c],
  usage: { promptTokens: 2, completionTokens: c.tokenIds.length },
  info: {},
});

const recorded = (c: SampledChoice): RecordedCall => ({
  callId: 'resp_abc',
  answer: answer(c),
  steps: [makeStep({ eventTimeMs: 1_700_000_000_500 })],
  timing: { upstreamMs: 0, barrierMs: 0, watermarksMs: 0, barrierWaitMs: 0, publishMs: 0, recordMs: 0 },
});

test('instructions, input items, function calls and their outputs become the chat messages, in order', () => {
  const request = parseResponsesRequest({
    model: 'm',
    instructions: 'be brief',
    input: [
      { role: 'user', content: 'look around' },
      { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'I will look', annotations: [] }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'look', arguments: '{"dir":"n"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_2', name: 'look', arguments: '{"dir":"s"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a wall' },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: [
          { type: 'input_text', text: 'a ' },
          { type: 'input_text', text: 'door' },
        ],
      },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'go on' }] },
    ],
  });
  assert.equal(request.endpoint, 'responses');
  assert.deepEqual(request.upstream.prompt, {
    kind: 'chat',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'look around' },
      {
        role: 'assistant',
        content: 'I will look',
        toolCalls: [
          { id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } },
          { id: 'call_2', type: 'function', function: { name: 'look', arguments: '{"dir":"s"}' } },
        ],
      },
      { role: 'tool', content: 'a wall', toolCallId: 'call_1' },
      { role: 'tool', content: 'a door', toolCallId: 'call_2' },
      { role: 'developer', content: 'go on' },
    ],
  });
  assert.deepEqual(parseResponsesRequest({ model: 'm', input: 'hi' }).upstream.prompt, { kind: 'chat', messages: [{ role: 'user', content: 'hi' }] });
});

test('sampling fields, tools, tool_choice and text.format take chat completions’ shape; metadata names the episode', () => {
  const tools = [{ type: 'function', name: 'look', description: 'look around', parameters: { type: 'object' }, strict: true }];
  const request = parseResponsesRequest({
    model: 'm',
    input: 'hi',
    max_output_tokens: 32,
    temperature: 0.5,
    top_p: 0.9,
    tools,
    tool_choice: { type: 'function', name: 'look' },
    parallel_tool_calls: false,
    text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
    include: ['message.output_text.logprobs'],
    top_logprobs: 2,
    metadata: { trajflow_episode: 'e1' },
    store: false,
    stream: true,
    stream_options: { include_obfuscation: false },
    user: 'u',
  });
  assert.deepEqual(request.upstream.sampling, { n: 1, temperature: 0.5, maxTokens: 32, stop: [], seed: null, logprobs: true, topLogprobs: 2 });
  assert.deepEqual(request.upstream.passthrough, {
    top_p: 0.9,
    tools: [{ type: 'function', function: { name: 'look', description: 'look around', parameters: { type: 'object' }, strict: true } }],
    tool_choice: { type: 'function', function: { name: 'look' } },
    parallel_tool_calls: false,
    response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
  });
  assert.deepEqual([request.stream, request.metadata], [true, { trajflow_episode: 'e1' }]);
  assert.deepEqual(request.echo?.tools, tools, 'the answer repeats the tools as sent');
  assert.equal(parseResponsesRequest({ model: 'm', input: 'hi' }).upstream.sampling.logprobs, false);
});

test('a malformed or unsupported Responses request is a 400 naming the field', () => {
  const base = { model: 'm', input: 'hi' };
  refused({ ...base, input: undefined }, 'input');
  refused({ ...base, input: [] }, 'input');
  refused({ ...base, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] }, 'input[0].content[0]');
  refused({ ...base, input: [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }] }, 'input[0].content[0]');
  refused({ ...base, input: [{ role: 'tool', content: 'x' }] }, 'input[0].role');
  refused({ ...base, input: [{ type: 'reasoning', summary: [] }] }, 'input[0].type');
  refused({ ...base, input: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] }, 'input[0].name');
  refused({ ...base, input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id');
  refused({ ...base, input: [{ role: 'user', content: 'x', extra: 1 }] }, 'input[0].extra');
  refused({ ...base, previous_response_id: 'resp_1' }, 'previous_response_id');
  refused({ ...base, reasoning: { effort: 'low' } }, 'reasoning');
  refused({ ...base, background: true }, 'background');
  refused({ ...base, truncation: 'auto' }, 'truncation');
  refused({ ...base, tools: [{ type: 'web_search' }] }, 'tools[0].type');
  refused({ ...base, tools: [{ type: 'function' }] }, 'tools[0].name');
  refused({ ...base, tool_choice: { type: 'file_search' } }, 'tool_choice');
  refused({ ...base, text: { format: { type: 'xml' } } }, 'text.format');
  refused({ ...base, include: ['everything'] }, 'include[0]');
  refused({ ...base, temperature: 3 }, 'temperature');
  refused({ ...base, max_output_tokens: 0 }, 'max_output_tokens');
  refused({ ...base, stream_options: { include_obfuscation: true } }, 'stream_options');
  refused({ ...base, n: 2 }, 'n');
});

test('a recorded call is one response object: the message with its log-probs, usage, and the request’s settings', () => {
  const request = parseResponsesRequest({ model: 'm', input: 'hi', instructions: 'be', include: ['message.output_text.logprobs'], top_logprobs: 1, metadata: { k: 'v' } });
  const reply = answerOf(request, recorded(choice()));
  assert.ok(!reply.stream);
  const body = reply.body as ReturnType<typeof JSON.parse>;
  assert.deepEqual(
    [body.id, body.object, body.created_at, body.status, body.model, body.instructions, body.metadata],
    ['resp_abc', 'response', 1_700_000_000, 'completed', 'm', 'be', { k: 'v' }],
  );
  assert.equal(body.output.length, 1);
  const [message] = body.output;
  assert.deepEqual([message.type, message.role, message.status, message.id], ['message', 'assistant', 'completed', 'msg_abc']);
  assert.equal(message.content[0].text, 'héllo');
  assert.deepEqual(message.content[0].logprobs, [
    { token: 'hé', logprob: -0.25, bytes: [104, 195, 169], top_logprobs: [{ token: 'hé', logprob: -0.25, bytes: [104, 195, 169] }] },
    { token: 'llo', logprob: -1.5, bytes: [108, 108, 111], top_logprobs: [{ token: 'llo', logprob: -1.5, bytes: [108, 108, 111] }] },
  ]);
  assert.deepEqual(body.usage, { input_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 4 });
  const plain = answerOf(parseResponsesRequest({ model: 'm', input: 'hi' }), recorded(choice()));
  assert.deepEqual((plain as { body: { output: Array<{ content: Array<{ logprobs: unknown }> }> } }).body.output[0]!.content[0]!.logprobs, [], 'none unless asked');
});

test('tool calls are function_call items after the message; a reply cut by the token limit is incomplete', () => {
  const calls = [{ id: 'call_9', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } }];
  const body = (
    answerOf(parseResponsesRequest({ model: 'm', input: 'hi' }), recorded(choice({ text: '', toolCalls: calls, finishReason: 'tool_calls' }))) as {
      body: ReturnType<typeof JSON.parse>;
    }
  ).body;
  assert.deepEqual(body.output, [{ id: 'fc_abc_0', type: 'function_call', status: 'completed', call_id: 'call_9', name: 'look', arguments: '{"dir":"n"}' }]);
  const cut = (answerOf(parseResponsesRequest({ model: 'm', input: 'hi' }), recorded(choice({ finishReason: 'length' }))) as { body: ReturnType<typeof JSON.parse> }).body;
  assert.deepEqual([cut.status, cut.incomplete_details, cut.output[0].status], ['incomplete', { reason: 'max_output_tokens' }, 'incomplete']);
});

interface Event {
  type: string;
  sequence_number: number;
  [key: string]: unknown;
}

function eventsOf(request: ReturnType<typeof parseResponsesRequest>, c: SampledChoice): Event[] {
  const reply = answerOf(request, recorded(c));
  assert.ok(reply.stream);
  return reply.events.map((e) => {
    const data = JSON.parse(e.data) as Event;
    assert.equal(e.event, data.type, 'each event is named by its type');
    return data;
  });
}

test('the event stream comes in OpenAI’s order, numbered, and its deltas add up to the response object', () => {
  const calls = [{ id: 'call_9', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } }];
  const request = parseResponsesRequest({ model: 'm', input: 'hi', stream: true, include: ['message.output_text.logprobs'] });
  const events = eventsOf(request, choice({ toolCalls: calls, finishReason: 'tool_calls' }));
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
  );
  const final = events.at(-1)!.response as ReturnType<typeof JSON.parse>;
  const whole = (answerOf({ ...request, stream: false }, recorded(choice({ toolCalls: calls, finishReason: 'tool_calls' }))) as { body: unknown }).body;
  assert.deepEqual(final, whole, 'response.completed carries the same object as the non-streamed answer');
  const created = events[0]!.response as { status: string; output: unknown[]; id: string };
  assert.deepEqual([created.status, created.output, created.id], ['in_progress', [], 'resp_abc']);
  const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
  assert.equal(text.join(''), 'héllo');
  const delta = events.find((e) => e.type === 'response.output_text.delta')!;
  assert.deepEqual(delta.logprobs, [
    { token: 'hé', logprob: -0.25, top_logprobs: [] },
    { token: 'llo', logprob: -1.5, top_logprobs: [] },
  ]);
  const args = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta);
  assert.equal(args.join(''), '{"dir":"n"}');
  const cut = eventsOf(request, choice({ finishReason: 'length' }));
  assert.equal(cut.at(-1)!.type, 'response.incomplete');
});
