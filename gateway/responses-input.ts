// The `input` of POST /v1/responses as the gateway's chat messages, read strictly (openai-node's
// ResponseInputItem): a string is one user message; items are messages (`input_text` parts, or an
// assistant's `output_text` / `refusal` parts), `function_call` items (folded into the assistant message before
// them, as chat completions' `tool_calls`) and `function_call_output` items (tool messages). Anything else —
// images, files, reasoning items, references to stored items — is a 400 naming it (`input[2].content[0]`). Pure.
import { invalidParam } from './openai-error.js';
import { isObject, onlyKnown, stringField, type Body } from './fields.js';
import type { ChatMessage, ChatRole } from './upstream.js';

type Message = { -readonly [K in keyof ChatMessage]: ChatMessage[K] };

const MESSAGE_KEYS = new Set(['type', 'role', 'content', 'id', 'status', 'phase']);
const CALL_KEYS = new Set(['type', 'call_id', 'name', 'arguments', 'id', 'status']);
const OUTPUT_KEYS = new Set(['type', 'call_id', 'output', 'id', 'status']);
const ROLES: ReadonlySet<string> = new Set(['user', 'system', 'developer', 'assistant']);

/** The text of one content part: `input_text` for the client's roles, `output_text` or `refusal` for the assistant's. */
function partText(part: unknown, param: string, assistant: boolean): string {
  if (isObject(part) && assistant && part.type === 'output_text' && typeof part.text === 'string') return part.text;
  if (isObject(part) && assistant && part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
  if (isObject(part) && !assistant && part.type === 'input_text' && typeof part.text === 'string') return part.text;
  const expected = assistant ? '{"type": "output_text", "text": "..."}' : '{"type": "input_text", "text": "..."}';
  throw invalidParam(param, `must be a text part ${expected} (the gateway takes text only)`);
}

function contentText(content: unknown, param: string, assistant: boolean): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParam(param, 'must be a string or an array of content parts', content === undefined ? 'missing_required_parameter' : 'invalid_type');
  return content.map((part, j) => partText(part, `${param}[${j}]`, assistant)).join('');
}

function messageItem(item: Body, at: string): Message {
  onlyKnown(item, MESSAGE_KEYS, `${at}.`);
  const role = stringField(item, 'role', { required: true, param: `${at}.role` })!;
  if (!ROLES.has(role)) throw invalidParam(`${at}.role`, `must be one of user, system, developer, assistant; got ${JSON.stringify(role).slice(0, 40)}`);
  return { role: role as ChatRole, content: contentText(item.content, `${at}.content`, role === 'assistant') };
}

function callItem(item: Body, at: string): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  onlyKnown(item, CALL_KEYS, `${at}.`);
  const id = stringField(item, 'call_id', { required: true, nonEmpty: true, param: `${at}.call_id` })!;
  const name = stringField(item, 'name', { required: true, nonEmpty: true, param: `${at}.name` })!;
  const args = stringField(item, 'arguments', { required: true, param: `${at}.arguments` })!;
  return { id, type: 'function', function: { name, arguments: args } };
}

function outputItem(item: Body, at: string): Message {
  onlyKnown(item, OUTPUT_KEYS, `${at}.`);
  const toolCallId = stringField(item, 'call_id', { required: true, nonEmpty: true, param: `${at}.call_id` })!;
  return { role: 'tool', content: contentText(item.output, `${at}.output`, false), toolCallId };
}

/** Adds one input item to the messages: a function call joins the assistant message just before it. */
function addItem(messages: Message[], raw: unknown, i: number): void {
  const at = `input[${i}]`;
  if (!isObject(raw)) throw invalidParam(at, 'must be an input item object', 'invalid_type');
  const type = raw.type ?? 'message';
  if (type === 'message') messages.push(messageItem(raw, at));
  else if (type === 'function_call_output') messages.push(outputItem(raw, at));
  else if (type === 'function_call') {
    const call = callItem(raw, at);
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
    else messages.push({ role: 'assistant', content: '', toolCalls: [call] });
  } else if (type === 'item_reference') {
    // Clients that expect the server to store every answer (store: true, the API's default) refer to earlier items by id.
    throw invalidParam(
      `${at}.type`,
      `"item_reference" is not supported: the gateway stores no items, so send the referenced item itself (a client that refers to its earlier answers does so while store is true: send store: false)`,
    );
  } else {
    throw invalidParam(
      `${at}.type`,
      `${JSON.stringify(type).slice(0, 40)} is not supported: the gateway takes message, function_call and function_call_output items (it stores no items to refer to, and its models have no built-in tools or reasoning items)`,
    );
  }
}

/** The chat messages of `instructions` (a system message first) and `input`. */
export function responsesMessages(body: Body): ChatMessage[] {
  const instructions = stringField(body, 'instructions');
  const messages: Message[] = instructions === undefined || instructions === '' ? [] : [{ role: 'system', content: instructions }];
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input) && input.length > 0) input.forEach((item, i) => addItem(messages, item, i));
  else throw invalidParam('input', 'must be a string or a non-empty array of input items', input === undefined ? 'missing_required_parameter' : 'invalid_value');
  return messages;
}
