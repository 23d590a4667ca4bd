// A recorded call answered in the shape of OpenAI's Responses API (openai-node's Response and
// ResponseStreamEvent): a `response` object whose output is an assistant `message` item with one `output_text`
// part (its log-probs when asked) and a `function_call` item per tool call, or for `stream: true` its event
// stream in OpenAI's order, each event named by its type and numbered by `sequence_number`:
//
//   response.created → response.in_progress → per item: response.output_item.added, then for a message
//   response.content_part.added, response.output_text.delta, response.output_text.done, response.content_part.done,
//   for a call response.function_call_arguments.delta, response.function_call_arguments.done; then
//   response.output_item.done → response.completed (response.incomplete when the token limit cut the reply).
//
// The step was published before any of it is sent, so the whole text comes in one delta. Pure.
import type { AnswerMeta } from './responses.js';
import { typedEvents, type SseEvent, type TypedEvent } from './sse.js';
import { functionCallsOf } from './tool-calls.js';
import type { SampledChoice, UpstreamAnswer } from './upstream.js';

type Echo = Readonly<Record<string, unknown>>;
type Status = 'completed' | 'incomplete';

const bytesOf = (token: string): number[] => [...Buffer.from(token, 'utf8')];

/** The output_text part's log-probs: every token with its alternatives, bytes included. */
function partLogprobs(choice: SampledChoice, meta: AnswerMeta) {
  if (!meta.logprobs) return [];
  return choice.tokens.map((token, i) => ({
    token,
    logprob: choice.logProbs[i]!,
    bytes: bytesOf(token),
    top_logprobs: (choice.topLogProbs[i] ?? []).slice(0, meta.topLogprobs).map((t) => ({ token: t.token, logprob: t.logprob, bytes: bytesOf(t.token) })),
  }));
}

/** The delta event's log-probs (no bytes, as OpenAI streams them). */
function deltaLogprobs(choice: SampledChoice, meta: AnswerMeta) {
  return partLogprobs(choice, meta).map(({ token, logprob, top_logprobs }) => ({
    token,
    logprob,
    top_logprobs: top_logprobs.map((t) => ({ token: t.token, logprob: t.logprob })),
  }));
}

function statusOf(choice: SampledChoice): { status: Status; incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null } {
  if (choice.finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (choice.finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const suffixOf = (meta: AnswerMeta): string => meta.id.replace(/^resp_/, '');

/** The output items: the message (when it has text, or nothing else), then one function_call per tool call. */
export function outputItems(choice: SampledChoice, meta: AnswerMeta) {
  const { status } = statusOf(choice);
  const calls = functionCallsOf(choice).map((call, j) => ({
    id: `fc_${suffixOf(meta)}_${j}`,
    type: 'function_call' as const,
    status: 'completed' as const,
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
  }));
  if (choice.text === '' && calls.length > 0) return calls;
  const part = { type: 'output_text' as const, text: choice.text, annotations: [], logprobs: partLogprobs(choice, meta) };
  return [{ id: `msg_${suffixOf(meta)}`, type: 'message' as const, status, role: 'assistant' as const, content: [part] }, ...calls];
}

function usageOf(answer: UpstreamAnswer) {
  const output = answer.choices.reduce((sum, c) => sum + c.tokenIds.length, 0);
  const input = answer.usage.promptTokens;
  return { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + output };
}

/** The response object's fields other than its status, output and usage: the request's settings it repeats. */
function responseHead(answer: UpstreamAnswer, meta: AnswerMeta, echo: Echo) {
  return {
    id: meta.id,
    object: 'response' as const,
    created_at: meta.createdS,
    model: answer.model,
    error: null,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    metadata: echo.metadata ?? {},
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: null,
    background: false,
    store: echo.store ?? true,
    temperature: echo.temperature ?? null,
    text: echo.text ?? { format: { type: 'text' } },
    tool_choice: echo.tool_choice ?? 'auto',
    tools: echo.tools ?? [],
    top_logprobs: echo.top_logprobs ?? 0,
    top_p: echo.top_p ?? null,
    truncation: echo.truncation ?? 'disabled',
    service_tier: echo.service_tier ?? 'default',
    ...(echo.user === undefined ? {} : { user: echo.user }),
  };
}

/** The `response` object of a recorded call (its one choice). */
export function responseObject(answer: UpstreamAnswer, meta: AnswerMeta, echo: Echo) {
  const choice = answer.choices[0]!;
  return { ...responseHead(answer, meta, echo), ...statusOf(choice), output: outputItems(choice, meta), usage: usageOf(answer) };
}

type Item = ReturnType<typeof outputItems>[number];

/** The events of one output item, from its `added` to its `done`. */
function itemEvents(item: Item, outputIndex: number, choice: SampledChoice, meta: AnswerMeta): TypedEvent[] {
  const at = { item_id: item.id, output_index: outputIndex };
  if (item.type === 'function_call') {
    return [
      { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.delta', ...at, delta: item.arguments },
      { type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments },
      { type: 'response.output_item.done', output_index: outputIndex, item },
    ];
  }
  const part = item.content[0]!;
  const text = { ...at, content_index: 0 };
  return [
    { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...text, part: { ...part, text: '', logprobs: [] } },
    ...(part.text === '' ? [] : [{ type: 'response.output_text.delta', ...text, delta: part.text, logprobs: deltaLogprobs(choice, meta) }]),
    { type: 'response.output_text.done', ...text, text: part.text, logprobs: deltaLogprobs(choice, meta) },
    { type: 'response.content_part.done', ...text, part },
    { type: 'response.output_item.done', output_index: outputIndex, item },
  ];
}

/** The event stream of a recorded call, each event numbered in order. */
export function responseEvents(answer: UpstreamAnswer, meta: AnswerMeta, echo: Echo): SseEvent[] {
  const done = responseObject(answer, meta, echo);
  const started = { ...done, status: 'in_progress', incomplete_details: null, output: [], usage: null };
  const events = [
    { type: 'response.created', response: started },
    { type: 'response.in_progress', response: started },
    ...done.output.flatMap((item, k) => itemEvents(item, k, answer.choices[0]!, meta)),
    { type: done.status === 'completed' ? 'response.completed' : 'response.incomplete', response: done },
  ];
  return typedEvents(events.map((event, sequence) => ({ ...event, sequence_number: sequence })));
}
