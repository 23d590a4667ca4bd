// What the read endpoints need of ClickHouse, and the few helpers every query module shares: a bound on
// how long one read may run on the server, and turning ClickHouse's JSON cells into API values.
//
// ClickHouse 18.16 does not cancel a query when its HTTP client goes away, so every read carries
// `max_execution_time`: a query that would scan for longer fails on the server (and the API answers 503)
// instead of running on after the client gave up.

/** What the read endpoints need of ClickHouse (ClickHouseHttp has it). */
export interface AnalyticsStore {
  queryJson<T = Record<string, unknown>>(sql: string): Promise<T[]>;
}

/** Seconds one read may run on the server. */
export const MAX_EXECUTION_SECONDS = 10;

/** The SQL with the read settings appended (a SETTINGS clause before the FORMAT that queryJson adds). */
export function readSql(sql: string): string {
  return `${sql}\nSETTINGS max_execution_time = ${MAX_EXECUTION_SECONDS}`;
}

/** Runs one bounded read. */
export function read<T>(store: AnalyticsStore, sql: string): Promise<T[]> {
  return store.queryJson<T>(readSql(sql));
}

/**
 * A numeric cell as a number. ClickHouse writes NaN and ±Infinity as JSON null (JSON has no literal for
 * them), so null means "not a finite number" wherever a column cannot be NULL.
 */
export function num(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

/** A count or id column (never null in its table): a number, 0 when absent. */
export function int(value: unknown): number {
  return num(value) ?? 0;
}

/** Parallel key/value arrays (how the sink stores an Avro map) as an object. */
export function mapOf(keys: readonly string[] | undefined, values: readonly unknown[] | undefined): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  (keys ?? []).forEach((key, i) => {
    out[key] = num(values?.[i]);
  });
  return out;
}

/** A pass@k-style map with its keys in numeric order (keys are the decimal k). */
export function kMap(keys: readonly string[] | undefined, values: readonly unknown[] | undefined): Record<string, number | null> {
  const pairs = (keys ?? []).map((key, i) => [key, num(values?.[i])] as const);
  pairs.sort((a, b) => Number(a[0]) - Number(b[0]) || a[0].localeCompare(b[0]));
  return Object.fromEntries(pairs);
}

/** The ks of one or more pass@k maps, ascending. */
export function ksOf(...maps: ReadonlyArray<Record<string, unknown>>): number[] {
  const ks = new Set<number>();
  for (const map of maps) for (const key of Object.keys(map)) if (/^\d+$/.test(key)) ks.add(Number(key));
  return [...ks].sort((a, b) => a - b);
}
