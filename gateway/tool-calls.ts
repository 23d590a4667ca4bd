// The function calls of a sampled reply, read out of the chat completions shape every upstream answers in
// (`{id, type: "function", function: {name, arguments}}`, as vLLM gives them), for the answers that carry them
// as items of their own: Responses' `function_call` items and Messages' `tool_use` blocks. A call not in that
// shape, or (for Messages) whose arguments are not a JSON object, is a 502 before anything is recorded. Pure.
import type { SampledChoice } from './upstream.js';
import { UpstreamShapeError } from './vllm-response.js';

export interface FunctionCall {
  readonly id: string;
  readonly name: string;
  /** The arguments as the model wrote them: JSON text. */
  readonly arguments: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The choice's function calls, in order; [] when it made none. */
export function functionCallsOf(choice: SampledChoice): FunctionCall[] {
  return (choice.toolCalls ?? []).map((call, j) => {
    const fn = isObj(call) ? call.function : undefined;
    if (!isObj(call) || typeof call.id !== 'string' || !isObj(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') {
      throw new UpstreamShapeError(`choices[0].message.tool_calls[${j}]`, 'is not {id, type: "function", function: {name, arguments}}');
    }
    return { id: call.id, name: fn.name, arguments: fn.arguments };
  });
}

/** A call's arguments as the JSON object Anthropic's `tool_use.input` is. */
export function argumentsObject(call: FunctionCall, j: number): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
  } catch {
    parsed = undefined;
  }
  if (!isObj(parsed)) throw new UpstreamShapeError(`choices[0].message.tool_calls[${j}].function.arguments`, 'is not a JSON object (a tool_use block needs one)');
  return parsed;
}
