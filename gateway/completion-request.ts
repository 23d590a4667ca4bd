// POST /v1/completions (the legacy text endpoint), read strictly like chat-request.ts. One string prompt per
// request (the step event records one prompt); `logprobs` is an integer here (0–5 alternatives), as in
// OpenAI's API; echo and suffix are refused (they would put text in the answer that was not sampled).
import { invalidParam } from './openai-error.js';
import { booleanField, integerField, isObject, metadataField, onlyKnown, stringField } from './fields.js';
import { passthroughOf, samplingOf, streamOf } from './sampling.js';
import type { GatewayRequest } from './chat-request.js';

const PASSTHROUGH = ['top_p', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'best_of'] as const;
const KNOWN = new Set([
  'model',
  'prompt',
  'n',
  'temperature',
  'max_tokens',
  'stop',
  'logprobs',
  'stream',
  'stream_options',
  'seed',
  'user',
  'echo',
  'suffix',
  'metadata',
  ...PASSTHROUGH,
]);

export function parseCompletionRequest(body: unknown): GatewayRequest {
  if (!isObject(body)) throw invalidParam('body', 'must be a JSON object', 'invalid_type');
  onlyKnown(body, KNOWN);
  const model = stringField(body, 'model', { required: true, nonEmpty: true })!;
  const prompt = body.prompt;
  if (Array.isArray(prompt)) throw invalidParam('prompt', 'must be one string: the gateway records one prompt per call (send one request per prompt)');
  const text = stringField(body, 'prompt', { required: true })!;
  if (booleanField(body, 'echo')) throw invalidParam('echo', 'is not supported: the answer holds only sampled text');
  if (body.suffix !== undefined && body.suffix !== null) throw invalidParam('suffix', 'is not supported (no insertion mode)');
  if (body.best_of !== undefined && body.best_of !== null && body.best_of !== 1) throw invalidParam('best_of', 'must be 1: the gateway records what it answers');
  const top = integerField(body, 'logprobs', 0, 5);
  stringField(body, 'user');
  const { stream, includeUsage } = streamOf(body);
  return {
    endpoint: 'completion',
    upstream: {
      model,
      prompt: { kind: 'text', prompt: text },
      sampling: samplingOf(body, ['max_tokens'], { logprobs: top !== undefined, topLogprobs: top ?? 0 }),
      passthrough: passthroughOf(body, PASSTHROUGH),
    },
    stream,
    includeUsage,
    metadata: metadataField(body),
  };
}
