// The answers in OpenAI's shapes: chat.completion and text_completion objects, and for `stream: true` the
// chat.completion.chunk / text_completion chunks of server-sent events ending with `data: [DONE]`. Pure.
//
// A streamed answer is sent after its step was published (answered ⇒ published), so its chunks come at once:
// per choice a role chunk, one content chunk with every token's log-probs, a finish chunk; then the usage
// chunk when stream_options.include_usage asked for it.
import type { SampledChoice, UpstreamAnswer } from './upstream.js';

export interface AnswerMeta {
  readonly id: string;
  readonly createdS: number;
  readonly logprobs: boolean;
  readonly topLogprobs: number;
}

function usageOf(answer: UpstreamAnswer) {
  const completion = answer.choices.reduce((sum, c) => sum + c.tokenIds.length, 0);
  return { prompt_tokens: answer.usage.promptTokens, completion_tokens: completion, total_tokens: answer.usage.promptTokens + completion };
}

const bytesOf = (token: string): number[] => [...Buffer.from(token, 'utf8')];

function chatLogprobs(choice: SampledChoice, meta: AnswerMeta) {
  if (!meta.logprobs) return null;
  return {
    content: choice.tokens.map((token, i) => ({
      token,
      logprob: choice.logProbs[i]!,
      bytes: bytesOf(token),
      top_logprobs: (choice.topLogProbs[i] ?? []).slice(0, meta.topLogprobs).map((t) => ({ token: t.token, logprob: t.logprob, bytes: bytesOf(t.token) })),
    })),
    refusal: null,
  };
}

function chatMessage(choice: SampledChoice) {
  const calls = choice.toolCalls && choice.toolCalls.length > 0 ? choice.toolCalls : null;
  return { role: 'assistant' as const, content: calls && choice.text === '' ? null : choice.text, refusal: null, ...(calls ? { tool_calls: calls } : {}) };
}

export function chatCompletion(answer: UpstreamAnswer, meta: AnswerMeta) {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.createdS,
    model: answer.model,
    system_fingerprint: `trajflow-v${answer.policyVersion}`,
    choices: answer.choices.map((choice, index) => ({ index, message: chatMessage(choice), logprobs: chatLogprobs(choice, meta), finish_reason: choice.finishReason })),
    usage: usageOf(answer),
  };
}

function textLogprobs(choice: SampledChoice, meta: AnswerMeta) {
  if (!meta.logprobs) return null;
  let offset = 0;
  const offsets = choice.tokens.map((token) => {
    const at = offset;
    offset += token.length;
    return at;
  });
  return {
    tokens: [...choice.tokens],
    token_logprobs: [...choice.logProbs],
    top_logprobs: choice.tokens.map((_, i) => Object.fromEntries((choice.topLogProbs[i] ?? []).slice(0, meta.topLogprobs).map((t) => [t.token, t.logprob]))),
    text_offset: offsets,
  };
}

export function textCompletion(answer: UpstreamAnswer, meta: AnswerMeta) {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.createdS,
    model: answer.model,
    system_fingerprint: `trajflow-v${answer.policyVersion}`,
    choices: answer.choices.map((choice, index) => ({ index, text: choice.text, logprobs: textLogprobs(choice, meta), finish_reason: choice.finishReason })),
    usage: usageOf(answer),
  };
}

/** The `data:` payloads of a streamed chat answer, `[DONE]` last. */
export function chatChunks(answer: UpstreamAnswer, meta: AnswerMeta, includeUsage: boolean): string[] {
  const head = { id: meta.id, object: 'chat.completion.chunk', created: meta.createdS, model: answer.model, system_fingerprint: `trajflow-v${answer.policyVersion}` };
  const chunks: object[] = [];
  answer.choices.forEach((choice, index) => {
    const message = chatMessage(choice);
    chunks.push({ ...head, choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const calls = message.tool_calls?.map((call, i) => ({ index: i, ...(call as object) }));
    chunks.push({
      ...head,
      choices: [{ index, delta: { content: choice.text, ...(calls ? { tool_calls: calls } : {}) }, logprobs: chatLogprobs(choice, meta), finish_reason: null }],
    });
    chunks.push({ ...head, choices: [{ index, delta: {}, logprobs: null, finish_reason: choice.finishReason }] });
  });
  if (includeUsage) chunks.push({ ...head, choices: [], usage: usageOf(answer) });
  return [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'];
}

/** The `data:` payloads of a streamed text completion, `[DONE]` last. */
export function textChunks(answer: UpstreamAnswer, meta: AnswerMeta, includeUsage: boolean): string[] {
  const head = { id: meta.id, object: 'text_completion', created: meta.createdS, model: answer.model, system_fingerprint: `trajflow-v${answer.policyVersion}` };
  const chunks: object[] = answer.choices.map((choice, index) => ({
    ...head,
    choices: [{ index, text: choice.text, logprobs: textLogprobs(choice, meta), finish_reason: choice.finishReason }],
  }));
  if (includeUsage) chunks.push({ ...head, choices: [], usage: usageOf(answer) });
  return [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'];
}
