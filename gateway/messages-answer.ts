// A recorded call answered in the shape of Anthropic's Messages API (@anthropic-ai/sdk's Message and
// RawMessageStreamEvent): a `message` whose content is a `text` block (when the reply has text, or nothing
// else) and a `tool_use` block per tool call, its `stop_reason` from the choice's finish (end_turn, max_tokens,
// stop_sequence, tool_use). For `stream: true` its events, each named by its type:
//
//   message_start → per block: content_block_start, content_block_delta (text_delta / input_json_delta),
//   content_block_stop → message_delta (stop_reason, usage) → message_stop
//
// Anthropic's API has no log-probs, so the answer carries none; the step has them. Pure.
import { typedEvents, type SseEvent, type TypedEvent } from './sse.js';
import { argumentsObject, functionCallsOf } from './tool-calls.js';
import type { SampledChoice, UpstreamAnswer } from './upstream.js';

type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

function stopOf(choice: SampledChoice, hasCalls: boolean): { stop_reason: StopReason; stop_sequence: string | null } {
  if (hasCalls || choice.finishReason === 'tool_calls') return { stop_reason: 'tool_use', stop_sequence: null };
  if (choice.finishReason === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (choice.finishReason === 'content_filter') return { stop_reason: 'refusal', stop_sequence: null };
  if (choice.stopSequence !== undefined) return { stop_reason: 'stop_sequence', stop_sequence: choice.stopSequence };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

/** The content blocks: the text (when it has any, or nothing else), then one tool_use per tool call. */
export function contentBlocks(choice: SampledChoice) {
  const uses = functionCallsOf(choice).map((call, j) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: argumentsObject(call, j) }));
  if (choice.text === '' && uses.length > 0) return uses;
  return [{ type: 'text' as const, text: choice.text, citations: null }, ...uses];
}

function usageOf(answer: UpstreamAnswer) {
  const output = answer.choices.reduce((sum, c) => sum + c.tokenIds.length, 0);
  return { input_tokens: answer.usage.promptTokens, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** The `message` of a recorded call (its one choice). */
export function messageObject(answer: UpstreamAnswer, id: string) {
  const choice = answer.choices[0]!;
  const content = contentBlocks(choice);
  return {
    id,
    type: 'message' as const,
    role: 'assistant' as const,
    model: answer.model,
    content,
    ...stopOf(
      choice,
      content.some((block) => block.type === 'tool_use'),
    ),
    usage: usageOf(answer),
  };
}

type Block = ReturnType<typeof contentBlocks>[number];

/** The events of one content block: its start (empty), one delta with all of it, its stop. */
function blockEvents(block: Block, index: number): TypedEvent[] {
  const start =
    block.type === 'text'
      ? { type: 'content_block_start', index, content_block: { ...block, text: '' } }
      : { type: 'content_block_start', index, content_block: { ...block, input: {} } };
  const delta = block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
  return [start, { type: 'content_block_delta', index, delta }, { type: 'content_block_stop', index }];
}

/** The event stream of a recorded call. */
export function messageEvents(answer: UpstreamAnswer, id: string): SseEvent[] {
  const done = messageObject(answer, id);
  const usage = done.usage;
  const started = { ...done, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } };
  return typedEvents([
    { type: 'message_start', message: started },
    ...done.content.flatMap((block, index) => blockEvents(block, index)),
    { type: 'message_delta', delta: { stop_reason: done.stop_reason, stop_sequence: done.stop_sequence }, usage },
    { type: 'message_stop' },
  ]);
}
