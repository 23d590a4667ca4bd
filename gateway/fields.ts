// Reading one field of a request body strictly: the right JSON type, in range, or a 400 naming it. Pure.
import { invalidParam } from './openai-error.js';

export type Body = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** Refuses a field the endpoint does not know, as OpenAI does ("Unrecognized request argument"). */
export function onlyKnown(body: Body, known: ReadonlySet<string>, prefix = ''): void {
  for (const key of Object.keys(body)) {
    if (!known.has(key)) throw invalidParam(`${prefix}${key}`, 'unrecognized request argument; remove it', 'unknown_parameter');
  }
}

export function stringField(body: Body, key: string, options: { required?: boolean; nonEmpty?: boolean; param?: string } = {}): string | undefined {
  const param = options.param ?? key;
  const value = body[key];
  if (value === undefined || value === null) {
    if (options.required) throw invalidParam(param, 'is required', 'missing_required_parameter');
    return undefined;
  }
  if (typeof value !== 'string') throw invalidParam(param, `must be a string, got ${typeName(value)}`, 'invalid_type');
  if (options.nonEmpty && value === '') throw invalidParam(param, 'must not be empty');
  return value;
}

export function booleanField(body: Body, key: string): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidParam(key, `must be true or false, got ${typeName(value)}`, 'invalid_type');
  return value;
}

export function numberField(body: Body, key: string, min: number, max: number): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidParam(key, `must be a number, got ${typeName(value)}`, 'invalid_type');
  if (value < min || value > max) throw invalidParam(key, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function integerField(body: Body, key: string, min: number, max: number): number | undefined {
  const value = numberField(body, key, min, max);
  if (value !== undefined && !Number.isInteger(value)) throw invalidParam(key, `must be an integer, got ${value}`, 'invalid_type');
  return value;
}

/** `stop`: a string or up to 4 non-empty strings (OpenAI's limit). */
export function stopField(body: Body): string[] {
  const value = body.stop;
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) throw invalidParam('stop', `must be a string or an array of strings, got ${typeName(value)}`, 'invalid_type');
  if (list.length > 4) throw invalidParam('stop', `takes at most 4 sequences, got ${list.length}`);
  return list.map((item, i) => {
    if (typeof item !== 'string' || item === '') throw invalidParam(`stop[${i}]`, 'must be a non-empty string');
    return item;
  });
}

/** `metadata`: OpenAI's map of at most 16 string values (keys ≤ 64 characters, values ≤ 512). */
export function metadataField(body: Body): Record<string, string> {
  const value = body.metadata;
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalidParam('metadata', `must be an object of strings, got ${typeName(value)}`, 'invalid_type');
  const entries = Object.entries(value);
  if (entries.length > 16) throw invalidParam('metadata', `holds at most 16 keys, got ${entries.length}`);
  for (const [key, item] of entries) {
    if (key.length > 64) throw invalidParam(`metadata.${key.slice(0, 64)}`, 'keys are at most 64 characters');
    if (typeof item !== 'string') throw invalidParam(`metadata.${key}`, `must be a string, got ${typeName(item)}`, 'invalid_type');
    if (item.length > 512) throw invalidParam(`metadata.${key}`, 'values are at most 512 characters');
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
