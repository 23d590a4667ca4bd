// POST /v1/messages (Anthropic's Messages API), read strictly into the gateway's chat request (the field names
// of @anthropic-ai/sdk's MessageCreateParams): `system` becomes the first message; a user message's
// `tool_result` blocks become tool messages and its text blocks a user message; an assistant message's
// `tool_use` blocks become chat completions' `tool_calls`; custom tools and `tool_choice` take chat
// completions' shape; `stop_sequences` are the stop strings and `top_k` is passed on. Images, documents,
// thinking and server tools are a 400 naming the field (`messages[1].content[0]`). The run, group and episode
// come from the x-trajflow-* headers: Anthropic's `metadata` holds only `user_id`. Pure.
import { invalidParam } from './openai-error.js';
import { booleanField, integerField, isObject, numberField, onlyKnown, stringField, type Body } from './fields.js';
import { samplingOf } from './sampling.js';
import type { GatewayRequest } from './chat-request.js';
import type { ChatMessage, ChatRole } from './upstream.js';

type Message = { -readonly [K in keyof ChatMessage]: ChatMessage[K] };

const KNOWN = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'metadata',
  'thinking',
  'service_tier',
  'cache_control',
]);
const MESSAGE_KEYS = new Set(['role', 'content']);
const BLOCK_KEYS: Readonly<Record<string, ReadonlySet<string>>> = {
  text: new Set(['type', 'text', 'cache_control', 'citations']),
  tool_use: new Set(['type', 'id', 'name', 'input', 'cache_control', 'caller']),
  tool_result: new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']),
};
const TOOL_KEYS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control', 'strict']);

/** One content block, its keys checked; only the kinds the role may send. */
function blockOf(raw: unknown, at: string, kinds: readonly string[]): Body & { type: string } {
  if (!isObject(raw) || typeof raw.type !== 'string' || !kinds.includes(raw.type)) {
    const got = isObject(raw) ? JSON.stringify(raw.type).slice(0, 40) : 'not an object';
    throw invalidParam(at, `must be a ${kinds.join(' or ')} block (the gateway takes text and tools only; got ${got})`);
  }
  onlyKnown(raw, BLOCK_KEYS[raw.type]!, `${at}.`);
  return raw as Body & { type: string };
}

function textOf(block: Body, at: string): string {
  return stringField(block, 'text', { required: true, param: `${at}.text` })!;
}

/** A tool_result's content: a string or text blocks, joined. */
function resultText(block: Body, at: string): string {
  const content = block.content;
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParam(`${at}.content`, 'must be a string or an array of text blocks', 'invalid_type');
  return content.map((inner, k) => textOf(blockOf(inner, `${at}.content[${k}]`, ['text']), `${at}.content[${k}]`)).join('');
}

/** A user message: its tool results as tool messages, its text as user messages, in block order. */
function userMessages(content: readonly unknown[], at: string): Message[] {
  const out: Message[] = [];
  content.forEach((raw, j) => {
    const p = `${at}.content[${j}]`;
    const block = blockOf(raw, p, ['text', 'tool_result']);
    if (block.type === 'tool_result') {
      const toolCallId = stringField(block, 'tool_use_id', { required: true, nonEmpty: true, param: `${p}.tool_use_id` })!;
      booleanField(block, 'is_error');
      out.push({ role: 'tool', content: resultText(block, p), toolCallId });
      return;
    }
    const last = out.at(-1);
    if (last?.role === 'user') last.content += textOf(block, p);
    else out.push({ role: 'user', content: textOf(block, p) });
  });
  return out;
}

/** An assistant message: its text joined, its tool_use blocks as tool calls. */
function assistantMessage(content: readonly unknown[], at: string): Message {
  const message: Message = { role: 'assistant', content: '' };
  const calls: unknown[] = [];
  content.forEach((raw, j) => {
    const p = `${at}.content[${j}]`;
    const block = blockOf(raw, p, ['text', 'tool_use']);
    if (block.type === 'text') {
      message.content += textOf(block, p);
      return;
    }
    const id = stringField(block, 'id', { required: true, nonEmpty: true, param: `${p}.id` })!;
    const name = stringField(block, 'name', { required: true, nonEmpty: true, param: `${p}.name` })!;
    if (!isObject(block.input)) throw invalidParam(`${p}.input`, 'must be an object', 'invalid_type');
    calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(block.input) } });
  });
  if (calls.length > 0) message.toolCalls = calls;
  return message;
}

function messagesOf(raw: unknown, i: number): Message[] {
  const at = `messages[${i}]`;
  if (!isObject(raw)) throw invalidParam(at, 'must be an object with a role and content', 'invalid_type');
  onlyKnown(raw, MESSAGE_KEYS, `${at}.`);
  const role = stringField(raw, 'role', { required: true, param: `${at}.role` })!;
  if (role !== 'user' && role !== 'assistant' && role !== 'system') throw invalidParam(`${at}.role`, `must be user or assistant; got ${JSON.stringify(role).slice(0, 40)}`);
  const content = raw.content;
  if (typeof content === 'string') return [{ role: role as ChatRole, content }];
  if (!Array.isArray(content))
    throw invalidParam(`${at}.content`, 'must be a string or an array of content blocks', content === undefined ? 'missing_required_parameter' : 'invalid_type');
  if (role === 'assistant') return [assistantMessage(content, at)];
  if (role === 'system') return [{ role: 'system', content: content.map((b, j) => textOf(blockOf(b, `${at}.content[${j}]`, ['text']), `${at}.content[${j}]`)).join('') }];
  return userMessages(content, at);
}

function systemOf(body: Body): Message[] {
  const system = body.system;
  if (system === undefined || system === null || system === '') return [];
  if (typeof system === 'string') return [{ role: 'system', content: system }];
  if (!Array.isArray(system)) throw invalidParam('system', 'must be a string or an array of text blocks', 'invalid_type');
  return [{ role: 'system', content: system.map((b, j) => textOf(blockOf(b, `system[${j}]`, ['text']), `system[${j}]`)).join('') }];
}

/** Custom tools as chat completions' function tools. */
function chatTools(raw: unknown): unknown[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidParam('tools', 'must be an array of tools', 'invalid_type');
  return raw.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalidParam(at, 'must be a tool object', 'invalid_type');
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom')
      throw invalidParam(`${at}.type`, `server tools are not supported (got ${JSON.stringify(tool.type).slice(0, 40)}): give custom tools {name, description, input_schema}`);
    onlyKnown(tool, TOOL_KEYS, `${at}.`);
    const name = stringField(tool, 'name', { required: true, nonEmpty: true, param: `${at}.name` })!;
    const description = stringField(tool, 'description', { param: `${at}.description` });
    if (!isObject(tool.input_schema)) throw invalidParam(`${at}.input_schema`, 'is required: a JSON Schema object', 'missing_required_parameter');
    const strict = booleanField(tool, 'strict');
    return {
      type: 'function',
      function: { name, ...(description === undefined ? {} : { description }), parameters: tool.input_schema, ...(strict === undefined ? {} : { strict }) },
    };
  });
}

/** `tool_choice` as chat completions' tool_choice and parallel_tool_calls. */
function toolChoiceOf(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) throw invalidParam('tool_choice', 'must be an object such as {"type": "auto"}', 'invalid_type');
  const serial = raw.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  if (raw.type === 'auto') return { tool_choice: 'auto', ...serial };
  if (raw.type === 'any') return { tool_choice: 'required', ...serial };
  if (raw.type === 'none') return { tool_choice: 'none' };
  if (raw.type === 'tool' && typeof raw.name === 'string' && raw.name !== '') return { tool_choice: { type: 'function', function: { name: raw.name } }, ...serial };
  throw invalidParam('tool_choice', 'must be {"type": "auto"}, {"type": "any"}, {"type": "none"} or {"type": "tool", "name": "..."}');
}

function stopSequencesOf(body: Body): string[] {
  const raw = body.stop_sequences;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidParam('stop_sequences', 'must be an array of strings', 'invalid_type');
  return raw.map((item, i) => {
    if (typeof item !== 'string' || item === '') throw invalidParam(`stop_sequences[${i}]`, 'must be a non-empty string');
    return item;
  });
}

/** metadata ({user_id}), thinking (disabled only), service_tier: read, not used. */
function checkUnused(body: Body): void {
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isObject(metadata)) throw invalidParam('metadata', 'must be an object such as {"user_id": "..."}', 'invalid_type');
    onlyKnown(metadata, new Set(['user_id']), 'metadata.');
    stringField(metadata, 'user_id', { param: 'metadata.user_id' });
  }
  const thinking = body.thinking;
  if (thinking !== undefined && thinking !== null && !(isObject(thinking) && thinking.type === 'disabled'))
    throw invalidParam('thinking', 'is not supported: no upstream of the gateway writes thinking blocks (omit it or send {"type": "disabled"})');
  stringField(body, 'service_tier');
}

export function parseMessagesRequest(body: unknown): GatewayRequest {
  if (!isObject(body)) throw invalidParam('body', 'must be a JSON object', 'invalid_type');
  onlyKnown(body, KNOWN);
  const model = stringField(body, 'model', { required: true, nonEmpty: true })!;
  if (body.max_tokens === undefined) throw invalidParam('max_tokens', 'is required', 'missing_required_parameter');
  integerField(body, 'max_tokens', 1, 1_000_000);
  numberField(body, 'temperature', 0, 1);
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0)
    throw invalidParam('messages', 'must be a non-empty array of messages', raw === undefined ? 'missing_required_parameter' : 'invalid_value');
  checkUnused(body);
  const topP = numberField(body, 'top_p', 0, 1);
  const topK = integerField(body, 'top_k', 0, 1_000_000);
  const tools = chatTools(body.tools);
  const passthrough = {
    ...(topP === undefined ? {} : { top_p: topP }),
    ...(topK === undefined ? {} : { top_k: topK }),
    ...(tools.length > 0 ? { tools } : {}),
    ...toolChoiceOf(body.tool_choice),
  };
  return {
    endpoint: 'messages',
    upstream: {
      model,
      prompt: { kind: 'chat', messages: [...systemOf(body), ...raw.flatMap(messagesOf)] },
      sampling: { ...samplingOf(body, ['max_tokens'], { logprobs: false, topLogprobs: 0 }), stop: stopSequencesOf(body) },
      passthrough,
    },
    stream: booleanField(body, 'stream') ?? false,
    includeUsage: false,
    metadata: {},
    fieldNames: { stop: 'stop_sequences' },
  };
}
