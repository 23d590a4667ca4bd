// POST /v1/chat/completions, read strictly: every field known, typed and in range, or a 400 whose `param`
// names it (`messages[1].content`). Pure, so every refusal is unit-tested without a server.
//
// Fields: model, messages, n, temperature, max_tokens / max_completion_tokens, stop, logprobs, top_logprobs,
// stream, stream_options, seed, metadata, user; tools, tool_choice, parallel_tool_calls, top_p,
// frequency_penalty, presence_penalty, response_format and logit_bias are passed to the upstream as sent
// (an upstream that cannot honour one refuses it, see policy-upstream.ts).
import { invalidParam } from './openai-error.js';
import { booleanField, integerField, isObject, metadataField, onlyKnown, stringField, type Body } from './fields.js';
import { passthroughOf, samplingOf, streamOf } from './sampling.js';
import type { ChatMessage, ChatRole, UpstreamRequest } from './upstream.js';

export const CHAT_PASSTHROUGH = ['tools', 'tool_choice', 'parallel_tool_calls', 'top_p', 'frequency_penalty', 'presence_penalty', 'response_format', 'logit_bias'] as const;
const KNOWN = new Set([
  'model',
  'messages',
  'n',
  'temperature',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'logprobs',
  'top_logprobs',
  'stream',
  'stream_options',
  'seed',
  'metadata',
  'user',
  ...CHAT_PASSTHROUGH,
]);
const ROLES: ReadonlySet<string> = new Set<ChatRole>(['system', 'developer', 'user', 'assistant', 'tool']);
const MESSAGE_KEYS = new Set(['role', 'content', 'name', 'tool_calls', 'tool_call_id', 'refusal']);

/** The endpoint a call came to: chat and text completions, OpenAI's Responses, Anthropic's Messages. */
export type Endpoint = 'chat' | 'completion' | 'responses' | 'messages';

/** What the gateway needs of a request, whichever endpoint it came to. */
export interface GatewayRequest {
  readonly endpoint: Endpoint;
  readonly upstream: UpstreamRequest;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly metadata: Readonly<Record<string, string>>;
  /** What a Responses answer echoes of its request (instructions, tools, tool_choice …); absent for the others. */
  readonly echo?: Readonly<Record<string, unknown>>;
  /** The request's own name for a field of the internal chat request (`messages` → `input`), for errors raised past the parser. */
  readonly fieldNames?: Readonly<Record<string, string>>;
}

/** A message's content: a string, or text parts ({type: "text", text}) joined; null only where allowed. */
function contentOf(message: Body, param: string, nullable: boolean): string {
  const content = message.content;
  if (content === undefined || content === null) {
    if (nullable) return '';
    throw invalidParam(param, 'is required', 'missing_required_parameter');
  }
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParam(param, 'must be a string or an array of text parts', 'invalid_type');
  return content
    .map((part, i) => {
      if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
        throw invalidParam(`${param}[${i}]`, 'must be a text part {"type": "text", "text": "..."} (the gateway takes text only)');
      }
      return part.text;
    })
    .join('');
}

function messageOf(raw: unknown, i: number): ChatMessage {
  const at = `messages[${i}]`;
  if (!isObject(raw)) throw invalidParam(at, 'must be an object with a role and content', 'invalid_type');
  onlyKnown(raw, MESSAGE_KEYS, `${at}.`);
  const role = stringField(raw, 'role', { required: true, param: `${at}.role` })!;
  if (!ROLES.has(role)) throw invalidParam(`${at}.role`, `must be one of system, developer, user, assistant, tool; got ${JSON.stringify(role).slice(0, 40)}`);
  const toolCalls = raw.tool_calls;
  if (toolCalls !== undefined && toolCalls !== null && (role !== 'assistant' || !Array.isArray(toolCalls))) {
    throw invalidParam(`${at}.tool_calls`, 'is an array, and only an assistant message has tool calls');
  }
  const hasCalls = Array.isArray(toolCalls) && toolCalls.length > 0;
  const content = contentOf(raw, `${at}.content`, role === 'assistant' && hasCalls);
  const name = stringField(raw, 'name', { param: `${at}.name` });
  const toolCallId = stringField(raw, 'tool_call_id', { required: role === 'tool', nonEmpty: true, param: `${at}.tool_call_id` });
  return {
    role: role as ChatRole,
    content,
    ...(name === undefined ? {} : { name }),
    ...(hasCalls ? { toolCalls: toolCalls as unknown[] } : {}),
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}

export function parseChatRequest(body: unknown): GatewayRequest {
  if (!isObject(body)) throw invalidParam('body', 'must be a JSON object', 'invalid_type');
  onlyKnown(body, KNOWN);
  const model = stringField(body, 'model', { required: true, nonEmpty: true })!;
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalidParam('messages', 'must be a non-empty array of messages', messages === undefined ? 'missing_required_parameter' : 'invalid_value');
  const logprobs = booleanField(body, 'logprobs') ?? false;
  const topLogprobs = integerField(body, 'top_logprobs', 0, 20) ?? 0;
  if (topLogprobs > 0 && !logprobs) throw invalidParam('top_logprobs', 'needs logprobs: true');
  stringField(body, 'user');
  const { stream, includeUsage } = streamOf(body);
  return {
    endpoint: 'chat',
    upstream: {
      model,
      prompt: { kind: 'chat', messages: messages.map(messageOf) },
      sampling: samplingOf(body, ['max_tokens', 'max_completion_tokens'], { logprobs, topLogprobs }),
      passthrough: passthroughOf(body, CHAT_PASSTHROUGH),
    },
    stream,
    includeUsage,
    metadata: metadataField(body),
  };
}
