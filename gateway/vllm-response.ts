// Reading the token ids and log-probs out of an OpenAI-compatible server's answer, in vLLM's response shape
// (vllm/entrypoints/openai protocol; https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html).
// The gateway asks for `logprobs` and vLLM's `return_tokens_as_token_ids` (each logprobs token is then the
// string "token_id:<id>") and `return_token_ids` (newer vLLM: the choice's `token_ids` and the answer's
// `prompt_token_ids`). Chat: choices[i].logprobs.content[j] = {token, logprob, top_logprobs}; completions:
// choices[i].logprobs = {tokens, token_logprobs, top_logprobs} and prompt_token_ids per choice. A choice's
// `stop_reason` names the stop string that ended it (an integer when a stop token did).
// An answer without token ids is refused (UpstreamTokenIdsMissing, naming the field): the gateway never
// re-tokenizes text into ids (retokenisation drift) and never records a call without them. Pure.
import { OpenAIError } from './openai-error.js';
import type { SampledChoice, TopLogProb } from './upstream.js';

/** 502: the upstream answered, but not with what must be recorded. */
export class UpstreamShapeError extends OpenAIError {
  constructor(field: string, message: string, code = 'upstream_bad_response') {
    super(502, `the upstream's answer cannot be recorded: ${field} ${message}; nothing was recorded`, 'upstream_error', null, code);
  }
}

/** The documented refusal: the upstream gave no token ids for a choice. */
export function tokenIdsMissing(i: number): UpstreamShapeError {
  return new UpstreamShapeError(
    `choices[${i}].token_ids`,
    `is missing and choices[${i}].logprobs holds no "token_id:<id>" tokens (start vLLM with a version that honours return_tokens_as_token_ids, or return token_ids)`,
    'upstream_token_ids_missing',
  );
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const TOKEN_ID = /^token_id:(\d+)$/;

/** The id in vLLM's "token_id:<id>" form, or undefined. */
export function tokenIdOf(token: unknown): number | undefined {
  const match = typeof token === 'string' ? TOKEN_ID.exec(token) : null;
  return match ? Number(match[1]) : undefined;
}

function idList(value: unknown, field: string): number[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((id) => Number.isInteger(id) && id >= 0 && id <= 2 ** 31 - 1)) throw new UpstreamShapeError(field, 'is not an array of token ids');
  return value as number[];
}

interface TokenRows {
  tokens: string[];
  logProbs: number[];
  top: TopLogProb[][];
}

function chatRows(logprobs: unknown, i: number): TokenRows | null {
  if (!isObj(logprobs) || !Array.isArray(logprobs.content)) return null;
  const rows: TokenRows = { tokens: [], logProbs: [], top: [] };
  logprobs.content.forEach((entry: unknown, j) => {
    if (!isObj(entry) || typeof entry.token !== 'string' || typeof entry.logprob !== 'number')
      throw new UpstreamShapeError(`choices[${i}].logprobs.content[${j}]`, 'is not {token, logprob}');
    rows.tokens.push(entry.token);
    rows.logProbs.push(entry.logprob);
    rows.top.push(Array.isArray(entry.top_logprobs) ? entry.top_logprobs.filter(isObj).map((t) => ({ token: String(t.token), logprob: Number(t.logprob) })) : []);
  });
  return rows;
}

function textRows(logprobs: unknown, i: number): TokenRows | null {
  if (!isObj(logprobs) || !Array.isArray(logprobs.tokens) || !Array.isArray(logprobs.token_logprobs)) return null;
  const { tokens, token_logprobs: values, top_logprobs: top } = logprobs;
  if (tokens.length !== values.length || !values.every((v) => typeof v === 'number'))
    throw new UpstreamShapeError(`choices[${i}].logprobs.token_logprobs`, 'does not give one number per token');
  return {
    tokens: tokens.map(String),
    logProbs: values as number[],
    top: tokens.map((_, j) => {
      const alternatives = Array.isArray(top) ? top[j] : undefined;
      return isObj(alternatives) ? Object.entries(alternatives).map(([token, logprob]) => ({ token, logprob: Number(logprob) })) : [];
    }),
  };
}

const FINISH = new Set(['stop', 'length', 'tool_calls', 'content_filter']);

/** One choice of a chat or text answer, with its exact token ids and log-probs. */
export function sampledChoiceOf(raw: unknown, i: number, kind: 'chat' | 'text'): SampledChoice {
  if (!isObj(raw)) throw new UpstreamShapeError(`choices[${i}]`, 'is not an object');
  const rows = kind === 'chat' ? chatRows(raw.logprobs, i) : textRows(raw.logprobs, i);
  if (rows === null)
    throw new UpstreamShapeError(
      `choices[${i}].logprobs`,
      'is missing: the behaviour log-probs of the sampled tokens are required (request logprobs)',
      'upstream_logprobs_missing',
    );
  const fromTokens = rows.tokens.map(tokenIdOf);
  const ids = idList(raw.token_ids, `choices[${i}].token_ids`) ?? (fromTokens.every((id) => id !== undefined) ? (fromTokens as number[]) : null);
  if (ids === null) throw tokenIdsMissing(i);
  if (ids.length !== rows.logProbs.length) throw new UpstreamShapeError(`choices[${i}].token_ids`, `has ${ids.length} ids but logprobs has ${rows.logProbs.length} entries`);
  // A log-prob is ≤ 0; a server's rounding may give +0.0000001 for a certain token.
  const logProbs = rows.logProbs.map((lp) => Math.min(0, lp));
  const message = kind === 'chat' && isObj(raw.message) ? raw.message : {};
  const text = kind === 'chat' ? (typeof message.content === 'string' ? message.content : '') : typeof raw.text === 'string' ? raw.text : '';
  const finish = typeof raw.finish_reason === 'string' && FINISH.has(raw.finish_reason) ? raw.finish_reason : 'stop';
  return {
    text,
    tokenIds: ids,
    logProbs,
    tokens: rows.tokens,
    topLogProbs: rows.top,
    finishReason: finish as SampledChoice['finishReason'],
    toolCalls: Array.isArray(message.tool_calls) ? message.tool_calls : null,
    ...(finish === 'stop' && typeof raw.stop_reason === 'string' ? { stopSequence: raw.stop_reason } : {}),
  };
}

/** The prompt's ids: vLLM's top-level `prompt_token_ids` (chat) or the first choice's (completions). */
export function promptIdsOf(body: Json): number[] | null {
  const top = idList(body.prompt_token_ids, 'prompt_token_ids');
  if (top) return top;
  const first = Array.isArray(body.choices) && isObj(body.choices[0]) ? body.choices[0] : undefined;
  return first ? idList(first.prompt_token_ids, 'choices[0].prompt_token_ids') : null;
}
