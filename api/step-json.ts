// JSON → StepEvent, strictly: the JSON body of POST /v1/steps uses the field names of schemas/step/v1.avsc,
// and every field is type-checked here so that what reaches the codec always fits the Avro schema and an
// error can name the field. Conversions (the only ones):
//   * nullable unions (observationTokenIds, stateKey) may be absent, null, the plain value, or Avro's JSON
//     union form ({"array": [...]}, {"string": "..."}), so bodies written by Avro JSON encoders work too;
//   * the maps metrics and info may be absent, meaning {} (the schema has no default, but a JSON client
//     should not have to send empty maps);
//   * unknown fields are rejected (a misspelt `stateKye` must not silently become null).
// Semantic rules (log-probs <= 0, lengths that agree …) are validateEvent's job, not this file's.
import type { StepEvent } from '../schemas/index.js';

/** `unknownField` marks a field the schema does not have (a different dead-letter reason than a bad value). */
export type Conversion<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly field: string; readonly message: string; readonly unknownField: boolean };

class Bad {
  constructor(
    readonly field: string,
    readonly message: string,
    readonly unknownField = false,
  ) {}
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string ${JSON.stringify(value.length > 30 ? `${value.slice(0, 27)}...` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

type Reader<T> = (field: string, value: unknown) => T;

const string: Reader<string> = (field, value) => {
  if (typeof value !== 'string') throw new Bad(field, `must be a string, got ${describe(value)}`);
  return value;
};

const boolean: Reader<boolean> = (field, value) => {
  if (typeof value !== 'boolean') throw new Bad(field, `must be true or false, got ${describe(value)}`);
  return value;
};

const number: Reader<number> = (field, value) => {
  if (typeof value !== 'number') throw new Bad(field, `must be a number, got ${describe(value)}`);
  return value;
};

const int: Reader<number> = (field, value) => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) {
    throw new Bad(field, `must be a 32-bit integer, got ${describe(value)}`);
  }
  return value;
};

const long: Reader<number> = (field, value) => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Bad(field, `must be an integer (at most 2^53 in size), got ${describe(value)}`);
  return value;
};

function arrayOf<T>(item: Reader<T>): Reader<T[]> {
  return (field, value) => {
    if (!Array.isArray(value)) throw new Bad(field, `must be an array, got ${describe(value)}`);
    return value.map((v, i) => item(`${field}[${i}]`, v));
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mapOf<T>(values: Reader<T>): Reader<Record<string, T>> {
  return (field, value) => {
    if (!isPlainObject(value)) throw new Bad(field, `must be an object of ${values === number ? 'numbers' : 'strings'}, got ${describe(value)}`);
    // fromEntries defines own properties, so a key named "__proto__" stays a key, not a prototype.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, values(`${field}.${k}`, v)]));
  };
}

/** A ["null", T] union: absent or null → null; also Avro's JSON union form {"<branch>": value}. */
function nullable<T>(branch: string, inner: Reader<T>): Reader<T | null> {
  return (field, value) => {
    if (value === undefined || value === null) return null;
    if (isPlainObject(value)) {
      const keys = Object.keys(value);
      if (keys.length === 1 && keys[0] === branch) return inner(field, value[branch]);
      throw new Bad(field, `must be null, a ${branch}, or {"${branch}": …}; got an object with ${keys.length === 1 ? `key '${keys[0]}'` : `${keys.length} keys`}`);
    }
    return inner(field, value);
  };
}

/** A field the JSON body may leave out, with the value it then has. */
function optional<T>(inner: Reader<T>, fallback: () => T): Reader<T> {
  return (field, value) => (value === undefined ? fallback() : inner(field, value));
}

/** Every StepEvent field, in schema order, with its reader. Absent required fields fail as "missing". */
const fields: { readonly [K in keyof StepEvent]-?: Reader<StepEvent[K]> } = {
  eventId: string,
  runId: string,
  envName: string,
  envVersion: string,
  groupId: string,
  episodeId: string,
  stepIndex: int,
  observation: string,
  observationTokenIds: nullable('array', arrayOf(int)),
  action: string,
  actionTokenIds: arrayOf(int),
  actionLogProbs: arrayOf(number),
  policyVersion: long,
  reward: number,
  terminated: boolean,
  truncated: boolean,
  actionValid: boolean,
  stateKey: nullable('string', string),
  metrics: optional(mapOf(number), () => ({})),
  info: optional(mapOf(string), () => ({})),
  eventTimeMs: long,
};

const OPTIONAL = new Set<string>(['observationTokenIds', 'stateKey', 'metrics', 'info']);

export const stepFieldNames: readonly string[] = Object.keys(fields);

/** Converts one parsed JSON value to a StepEvent, or names the first bad field. */
export function stepFromJson(json: unknown): Conversion<StepEvent> {
  try {
    if (!isPlainObject(json)) throw new Bad('', `a step must be a JSON object, got ${describe(json)}`);
    for (const key of Object.keys(json)) {
      if (!Object.hasOwn(fields, key)) throw new Bad(key, `is not a field of a step event (fields: ${stepFieldNames.join(', ')})`, true);
    }
    const step: Record<string, unknown> = {};
    for (const [name, read] of Object.entries(fields) as [string, Reader<unknown>][]) {
      const value = json[name];
      if (value === undefined && !OPTIONAL.has(name)) throw new Bad(name, 'is missing');
      step[name] = read(name, value);
    }
    return { ok: true, value: step as unknown as StepEvent };
  } catch (error) {
    if (error instanceof Bad) return { ok: false, field: error.field, message: error.message, unknownField: error.unknownField };
    throw error;
  }
}
