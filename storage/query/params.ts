// Strict reading of query parameters for the read endpoints. ClickHouse 18.16 has no server-side query
// parameters, so SQL is built from values that passed these checks and nothing else: integers in a
// range, members of an enumeration, strings matching a pattern. Unknown and repeated parameters are
// rejected too, so a typo (`limt=5`) is an error instead of a silently ignored filter.
import { HttpProblem, problemTypes } from '../../core/problem.js';
import { ID_DESCRIPTION, ID_PATTERN } from '../../schemas/ids.js';

export type RawQuery = Record<string, unknown>;

function invalid(name: string, detail: string): HttpProblem {
  return new HttpProblem(problemTypes.invalidQuery, `${name}: ${detail}`, { field: name });
}

/** Rejects parameters outside `allowed` and parameters given more than once; returns name → raw string. */
export function readQuery(query: RawQuery, allowed: readonly string[]): ReadonlyMap<string, string> {
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(query)) {
    if (!allowed.includes(name)) {
      throw invalid(name, allowed.length === 0 ? 'unknown parameter; this endpoint takes none' : `unknown parameter; this endpoint takes ${allowed.join(', ')}`);
    }
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

/** Most rows any read endpoint returns in one response. */
export const MAX_ROWS = 1000;
/** The largest time a sinceMs/untilMs may name (the largest Date); far beyond any event time. */
export const MAX_TIME_MS = 8_640_000_000_000_000;
/** untilMs defaults to a little after now, so rows stamped by a clock slightly ahead still show. */
export const CLOCK_SKEW_MS = 60_000;
export const DAY_MS = 86_400_000;

/** `limit`: 1 … MAX_ROWS. */
export function limitParam(values: ReadonlyMap<string, string>, fallback: number, max = MAX_ROWS): number {
  return intParam(values, 'limit', { min: 1, max }, fallback);
}

/**
 * Run and episode ids in paths and queries: 1–256 characters from letters, digits and `. _ - : /`, starting
 * with a letter or digit. The grammar lives in schemas/ids.ts because ingest enforces the same one on the ids
 * of every step (validateEvent), so whatever was accepted can be read back.
 */
export { ID_DESCRIPTION, ID_PATTERN };

/** An optional id in the query string (e.g. runId, groupId). */
export function idParam(values: ReadonlyMap<string, string>, name: string): string | undefined {
  return patternParam(values, name, ID_PATTERN, ID_DESCRIPTION);
}

/** A comma-separated list of 1 to `max` distinct ids (e.g. runIds); undefined when absent. */
export function idListParam(values: ReadonlyMap<string, string>, name: string, max: number): readonly string[] | undefined {
  const raw = values.get(name);
  if (raw === undefined) return undefined;
  const ids = raw.split(',');
  if (ids.length > max) throw invalid(name, `names ${ids.length} ids; at most ${max}`);
  for (const id of ids) if (!ID_PATTERN.test(id)) throw invalid(name, `each must be ${ID_DESCRIPTION}, got '${id.slice(0, 40)}'`);
  if (new Set(ids).size !== ids.length) throw invalid(name, 'names an id twice');
  return ids;
}

/** An id from the path (`:runId`, `:episodeId`), already percent-decoded by express; 400 naming it otherwise. */
export function routeId(name: string, raw: unknown): string {
  if (typeof raw !== 'string' || !ID_PATTERN.test(raw)) {
    const shown = typeof raw === 'string' ? `, got '${raw.slice(0, 40)}'` : '';
    throw new HttpProblem(problemTypes.invalidPath, `${name}: must be ${ID_DESCRIPTION} (percent-encode '/' as %2F)${shown}`, { field: name });
  }
  return raw;
}

/** `true`/`false` (also `1`/`0`). */
export function boolParam(values: ReadonlyMap<string, string>, name: string): boolean | undefined {
  const raw = values.get(name);
  if (raw === undefined) return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw invalid(name, `must be true or false, got '${raw.slice(0, 40)}'`);
}

/** A comma-separated subset of `allowed` (each at most once); the fallback when absent. */
export function listParam<const T extends string>(values: ReadonlyMap<string, string>, name: string, allowed: readonly T[], fallback: readonly T[]): readonly T[] {
  const raw = values.get(name);
  if (raw === undefined) return fallback;
  const items = raw.split(',');
  for (const item of items) {
    if (!(allowed as readonly string[]).includes(item)) throw invalid(name, `must be a comma-separated list of ${allowed.join(', ')}, got '${item.slice(0, 40)}'`);
  }
  if (new Set(items).size !== items.length) throw invalid(name, 'names a value twice');
  return items as T[];
}

/** A time window [sinceMs, untilMs) in ms since the epoch. */
export interface TimeWindow {
  /** Inclusive. */
  readonly sinceMs: number;
  /** Exclusive. */
  readonly untilMs: number;
}

export interface WindowLimits {
  /** sinceMs defaults to untilMs minus this. */
  readonly defaultWindowMs: number;
  /** Widest window one request may name; wider is a 400 naming sinceMs. */
  readonly maxWindowMs: number;
}

/** `sinceMs` and `untilMs`: untilMs defaults to now (plus clock skew), sinceMs to the default window before it. */
export function windowParams(values: ReadonlyMap<string, string>, nowMs: number, limits: WindowLimits): TimeWindow {
  const untilMs = intParam(values, 'untilMs', { min: 1, max: MAX_TIME_MS }, nowMs + CLOCK_SKEW_MS);
  const sinceMs = intParam(values, 'sinceMs', { min: 0, max: MAX_TIME_MS }, Math.max(0, untilMs - limits.defaultWindowMs));
  if (sinceMs >= untilMs) throw invalid('sinceMs', `must be before untilMs (${sinceMs} is not before ${untilMs})`);
  if (untilMs - sinceMs > limits.maxWindowMs) {
    throw invalid('sinceMs', `the window from sinceMs to untilMs is over ${limits.maxWindowMs / DAY_MS} days: narrow it`);
  }
  return { sinceMs, untilMs };
}

/**
 * The window of the endpoints under /v1/runs/:runId: by default a year back from now, which covers a whole
 * run (the run id is the tables' leading key, so the scan is that run's rows only); at most a year.
 */
export const RUN_WINDOW: WindowLimits = Object.freeze({ defaultWindowMs: 366 * DAY_MS, maxWindowMs: 366 * DAY_MS });
