// The sampling fields shared by /v1/chat/completions and /v1/completions, read strictly. Pure.
import { invalidParam } from './openai-error.js';
import { booleanField, integerField, isObject, numberField, stopField, type Body } from './fields.js';
import type { SamplingParams } from './upstream.js';

/** Most completions one request may ask for (`n`). */
export const MAX_N = 16;

export function maxTokensOf(body: Body, keys: readonly string[]): number | null {
  let found: { key: string; value: number } | undefined;
  for (const key of keys) {
    const value = integerField(body, key, 1, 1_000_000);
    if (value === undefined) continue;
    if (found && found.value !== value) throw invalidParam(key, `disagrees with ${found.key} (${found.value}); send one of them`);
    found = { key, value };
  }
  return found?.value ?? null;
}

/** stream and stream_options: include_usage only with stream true. */
export function streamOf(body: Body): { stream: boolean; includeUsage: boolean } {
  const stream = booleanField(body, 'stream') ?? false;
  const options = body.stream_options;
  if (options === undefined || options === null) return { stream, includeUsage: false };
  if (!stream) throw invalidParam('stream_options', 'is only allowed when stream is true');
  if (!isObject(options)) throw invalidParam('stream_options', 'must be an object', 'invalid_type');
  for (const key of Object.keys(options)) if (key !== 'include_usage') throw invalidParam(`stream_options.${key}`, 'unrecognized option; remove it', 'unknown_parameter');
  const includeUsage = booleanField(options, 'include_usage') ?? false;
  return { stream, includeUsage };
}

/** n, temperature, max tokens, stop and seed; log-probs differ per endpoint and are passed in. */
export function samplingOf(body: Body, maxTokenKeys: readonly string[], logprobs: { logprobs: boolean; topLogprobs: number }): SamplingParams {
  return {
    n: integerField(body, 'n', 1, MAX_N) ?? 1,
    temperature: numberField(body, 'temperature', 0, 2) ?? null,
    maxTokens: maxTokensOf(body, maxTokenKeys),
    stop: stopField(body),
    seed: integerField(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) ?? null,
    ...logprobs,
  };
}

/** The fields of `body` named in `keys` that are present, for the upstream (tools, top_p …). */
export function passthroughOf(body: Body, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (body[key] !== undefined) out[key] = body[key];
  return out;
}
