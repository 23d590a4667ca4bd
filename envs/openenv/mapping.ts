// Text <-> OpenEnv objects. The policy speaks text (RAGEN's <think>…</think><answer>…</answer>), an
// OpenEnv environment speaks JSON objects that follow its schemas; these are the default translations,
// each replaceable by an option of the adapter.
import { extractAnswer } from '../actions.js';
import type { JsonObject } from './protocol.js';

/** Policy text -> the action's fields, or null when the text holds no usable action (an invalid action). */
export type ActionFromText = (text: string) => JsonObject | null;

export type ActionMapping = { ok: true; action: JsonObject } | { ok: false; problem: string };

/** The default: the content of the reply's <answer>, trimmed, into one string field. */
export function answerIntoField(field: string): (text: string) => ActionMapping {
  return (text) => {
    const extraction = extractAnswer(text);
    if (!extraction.ok) return { ok: false, problem: extraction.problem };
    if (extraction.value.answer === '') return { ok: false, problem: 'the answer is empty' };
    return { ok: true, action: { [field]: extraction.value.answer } };
  };
}

/** Wraps a user's actionFromText: null, or something that is not an object, is an invalid action. */
export function userMapping(actionFromText: ActionFromText): (text: string) => ActionMapping {
  return (text) => {
    const action = actionFromText(text);
    if (action === null || typeof action !== 'object' || Array.isArray(action)) {
      return { ok: false, problem: 'actionFromText found no action in the reply' };
    }
    return { ok: true, action };
  };
}

/** Field names tried, in order, by the default observationToText. */
export const DEFAULT_OBSERVATION_FIELDS: readonly string[] = ['text', 'prompt', 'message'];

/** The first of `fields` that holds a string, else the canonical JSON of the whole observation. */
export function observationText(fields: readonly string[]): (observation: JsonObject) => string {
  return (observation) => {
    for (const field of fields) {
      const value = observation[field];
      if (typeof value === 'string') return value;
    }
    return canonicalJson(observation);
  };
}

/**
 * JSON with object keys sorted at every level, so equal objects give equal strings whatever order
 * the server wrote their keys in (the default state key is this of the observation).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as JsonObject)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
