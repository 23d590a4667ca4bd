// POST /v1/responses (OpenAI's Responses API), read strictly into the gateway's chat request: `instructions` and
// `input` become messages (responses-input.ts), function tools and `tool_choice` take chat completions' shape,
// `text.format` becomes `response_format`, `max_output_tokens` the token limit, and `include:
// ["message.output_text.logprobs"]` (or `top_logprobs`) asks for log-probs in the answer. What needs state the
// gateway does not keep (previous_response_id, conversation, background, stored prompts) or that no upstream of
// it samples (reasoning, built-in tools, max_tool_calls) is a 400 naming the field. Pure.
import { invalidParam } from './openai-error.js';
import { booleanField, integerField, isObject, metadataField, numberField, onlyKnown, stringField, type Body } from './fields.js';
import { samplingOf } from './sampling.js';
import type { GatewayRequest } from './chat-request.js';
import { responsesMessages } from './responses-input.js';

const KNOWN = new Set([
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stream',
  'stream_options',
  'metadata',
  'user',
  'store',
  'include',
  'top_logprobs',
  'text',
  'truncation',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'previous_response_id',
  'conversation',
  'prompt',
  'background',
  'reasoning',
  'max_tool_calls',
]);

/** Fields of the Responses API the gateway refuses when set, and why. */
const REFUSED: Readonly<Record<string, string>> = {
  previous_response_id: 'the gateway stores no responses: send the whole conversation as input',
  conversation: 'the gateway stores no conversations: send the whole conversation as input',
  prompt: 'the gateway stores no prompt templates: send the instructions and input',
  reasoning: 'no upstream of the gateway writes reasoning items',
  max_tool_calls: 'applies to built-in tools, which the gateway has none of',
};

const INCLUDABLE = new Set([
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
]);

/** The request fields a Response object repeats. */
const ECHOED = [
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'top_logprobs',
  'user',
  'service_tier',
  'truncation',
  'store',
];

const TOOL_KEYS = new Set(['type', 'name', 'description', 'parameters', 'strict']);

function refuseStateful(body: Body): void {
  for (const [key, why] of Object.entries(REFUSED)) if (body[key] !== undefined && body[key] !== null) throw invalidParam(key, `is not supported: ${why}`);
  if (booleanField(body, 'background')) throw invalidParam('background', 'is not supported: every call is answered while it waits');
  const truncation = stringField(body, 'truncation');
  if (truncation !== undefined && truncation !== 'disabled') throw invalidParam('truncation', "must be 'disabled': the gateway never drops input items");
}

/** Function tools as chat completions' tools. */
function chatTools(raw: unknown): unknown[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw invalidParam('tools', 'must be an array of function tools', 'invalid_type');
  return raw.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalidParam(at, 'must be a function tool object', 'invalid_type');
    if (tool.type !== 'function') throw invalidParam(`${at}.type`, `must be 'function': the gateway has no built-in tools (got ${JSON.stringify(tool.type).slice(0, 40)})`);
    onlyKnown(tool, TOOL_KEYS, `${at}.`);
    const name = stringField(tool, 'name', { required: true, nonEmpty: true, param: `${at}.name` })!;
    const description = stringField(tool, 'description', { param: `${at}.description` });
    if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters))
      throw invalidParam(`${at}.parameters`, 'must be a JSON Schema object', 'invalid_type');
    const fn = {
      name,
      ...(description === undefined ? {} : { description }),
      parameters: tool.parameters ?? {},
      ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
    };
    return { type: 'function', function: fn };
  });
}

/** `tool_choice`: none, auto, required, or one function by name. */
function chatToolChoice(raw: unknown): unknown {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'none' || raw === 'auto' || raw === 'required') return raw;
  if (isObject(raw) && raw.type === 'function' && typeof raw.name === 'string' && raw.name !== '') return { type: 'function', function: { name: raw.name } };
  throw invalidParam('tool_choice', 'must be \'none\', \'auto\', \'required\' or {"type": "function", "name": "..."}');
}

/** `text.format` as chat completions' `response_format` (none for plain text). */
function responseFormat(raw: unknown): unknown {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw invalidParam('text', 'must be an object such as {"format": {"type": "text"}}', 'invalid_type');
  onlyKnown(raw, new Set(['format']), 'text.');
  const format = raw.format;
  if (format === undefined || format === null || (isObject(format) && format.type === 'text')) return undefined;
  if (isObject(format) && format.type === 'json_object') return { type: 'json_object' };
  if (isObject(format) && format.type === 'json_schema' && typeof format.name === 'string' && isObject(format.schema)) {
    const { type: _type, ...schema } = format;
    return { type: 'json_schema', json_schema: schema };
  }
  throw invalidParam('text.format', 'must be {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "name", "schema"}');
}

/** Log-probs in the answer: asked by include or by top_logprobs. */
function logprobsOf(body: Body): { logprobs: boolean; topLogprobs: number } {
  const include = body.include ?? [];
  if (!Array.isArray(include)) throw invalidParam('include', 'must be an array of strings', 'invalid_type');
  include.forEach((item, i) => {
    if (typeof item !== 'string' || !INCLUDABLE.has(item)) throw invalidParam(`include[${i}]`, `is not one of ${[...INCLUDABLE].join(', ')}`);
  });
  const topLogprobs = integerField(body, 'top_logprobs', 0, 20) ?? 0;
  return { logprobs: include.includes('message.output_text.logprobs') || topLogprobs > 0, topLogprobs };
}

function streamOf(body: Body): boolean {
  const stream = booleanField(body, 'stream') ?? false;
  const options = body.stream_options;
  if (options === undefined || options === null) return stream;
  if (!stream) throw invalidParam('stream_options', 'is only allowed when stream is true');
  if (!isObject(options)) throw invalidParam('stream_options', 'must be an object', 'invalid_type');
  onlyKnown(options, new Set(['include_obfuscation']), 'stream_options.');
  return stream;
}

export function parseResponsesRequest(body: unknown): GatewayRequest {
  if (!isObject(body)) throw invalidParam('body', 'must be a JSON object', 'invalid_type');
  onlyKnown(body, KNOWN);
  refuseStateful(body);
  const model = stringField(body, 'model', { required: true, nonEmpty: true })!;
  const messages = responsesMessages(body);
  for (const key of ['user', 'service_tier', 'prompt_cache_key', 'safety_identifier']) stringField(body, key);
  booleanField(body, 'store');
  const parallel = booleanField(body, 'parallel_tool_calls');
  const topP = numberField(body, 'top_p', 0, 1);
  const tools = chatTools(body.tools);
  const toolChoice = chatToolChoice(body.tool_choice);
  const format = responseFormat(body.text);
  const passthrough = {
    ...(topP === undefined ? {} : { top_p: topP }),
    ...(tools && tools.length > 0 ? { tools } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(parallel === undefined ? {} : { parallel_tool_calls: parallel }),
    ...(format ? { response_format: format } : {}),
  };
  const metadata = metadataField(body);
  return {
    endpoint: 'responses',
    upstream: { model, prompt: { kind: 'chat', messages }, sampling: samplingOf(body, ['max_output_tokens'], logprobsOf(body)), passthrough },
    stream: streamOf(body),
    includeUsage: false,
    metadata,
    echo: { ...Object.fromEntries(ECHOED.filter((key) => body[key] !== undefined).map((key) => [key, body[key]])), metadata },
    fieldNames: { messages: 'input', max_tokens: 'max_output_tokens', response_format: 'text.format' },
  };
}
