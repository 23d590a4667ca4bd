// Strict reading of query parameters for the read endpoints. ClickHouse 18.16 has no server-side query
// parameters, so SQL is built from values that passed these checks and nothing else: integers in a
// range, members of an enumeration, strings matching a pattern. Unknown and repeated parameters are
// rejected too, so a typo (`limt=5`) is an error instead of a silently ignored filter.
import { HttpProblem, problemTypes } from '../problem.js';

export type RawQuery = Record<string, unknown>;

function invalid(name: string, detail: string): HttpProblem {
  return new HttpProblem(problemTypes.invalidQuery, `${name}: ${detail}`, { field: name });
}

/** Rejects parameters outside `allowed` and parameters given more than once; returns name → raw string. */
export function readQuery(query: RawQuery, allowed: readonly string[]): ReadonlyMap<string, string> {
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(query)) {
    if (!allowed.includes(name)) throw invalid(name, `unknown parameter; this endpoint takes ${allowed.join(', ')}`);
    if (typeof value !== 'string') throw invalid(name, 'given more than once (or with brackets); give it once');
    values.set(name, value);
  }
  return values;
}

export interface IntRange {
  readonly min: number;
  readonly max: number;
}

/** A decimal integer (optional leading minus, no exponent, no spaces) within [min, max]. */
export function intParam(values: ReadonlyMap<string, string>, name: string, range: IntRange, fallback: number): number {
  const raw = values.get(name);
  if (raw === undefined) return fallback;
  if (!/^-?\d{1,16}$/.test(raw)) throw invalid(name, `must be an integer between ${range.min} and ${range.max}, got '${raw.slice(0, 40)}'`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw invalid(name, `must be between ${range.min} and ${range.max}, got ${raw}`);
  }
  return value;
}

/** One of a fixed list of values. */
export function enumParam<const T extends string>(values: ReadonlyMap<string, string>, name: string, allowed: readonly T[], fallback: T): T {
  const raw = values.get(name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw invalid(name, `must be one of ${allowed.join(', ')}, got '${raw.slice(0, 40)}'`);
  return raw as T;
}

/** A string matching `pattern` (anchored by the caller), e.g. a reason code. */
export function patternParam(values: ReadonlyMap<string, string>, name: string, pattern: RegExp, describe: string): string | undefined {
  const raw = values.get(name);
  if (raw === undefined) return undefined;
  if (!pattern.test(raw)) throw invalid(name, `must be ${describe}, got '${raw.slice(0, 40)}'`);
  return raw;
}
