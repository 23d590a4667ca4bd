// GET /v1/runs/:runId/pass-at-k: pass@k (at least one of k trials succeeds) and pass^k (all k succeed) of a
// run's rollout batches: the latest batch that reported them, the whole window pooled (weighted by the
// batches' group counts, as a batch averages its groups), and the series over time — per batch, or per
// bucket with bucketMs (or automatically when the window has more batches than `limit`), as for the curve.
import { batchPointsSql, batchWhere, passKSql, passMaps, planSeries, type BatchPointRow, type PassKRow, type SeriesPlan, type SeriesQuery } from './curve.js';
import { int, kMap, ksOf, read, type AnalyticsStore } from './store.js';

export { parseSeriesQuery as parsePassAtKQuery } from './curve.js';

/** The newest batch of the window with pass@k or pass^k values. */
export function latestPassKSql(q: SeriesQuery): string {
  return `SELECT batch_id, event_time_ms, groups, pass_at_k_keys, pass_at_k_values, pass_hat_k_keys, pass_hat_k_values
FROM rollout_stats FINAL
WHERE ${batchWhere(q)} AND length(pass_at_k_keys) + length(pass_hat_k_keys) > 0
ORDER BY event_time_ms DESC, batch_id DESC
LIMIT 1`;
}

type PassMap = Record<string, number | null>;

export interface PassPoint {
  /** The batch's time, or the start of its bucket. */
  readonly timeMs: number;
  readonly batchId: string | null;
  readonly batches: number;
  readonly passAtK: PassMap;
  readonly passHatK: PassMap;
}

export interface PassAtKResult {
  /** Every k reported in the window, ascending. */
  readonly ks: number[];
  readonly latest: { readonly batchId: string; readonly eventTimeMs: number; readonly groups: number; readonly passAtK: PassMap; readonly passHatK: PassMap } | null;
  /** The window pooled: each k's values weighted by group count. */
  readonly overall: { readonly batches: number; readonly passAtK: PassMap; readonly passHatK: PassMap };
  /** One row per k: latest and pooled values side by side. */
  readonly byK: ReadonlyArray<{
    readonly k: number;
    readonly latestPassAtK: number | null;
    readonly latestPassHatK: number | null;
    readonly overallPassAtK: number | null;
    readonly overallPassHatK: number | null;
  }>;
  readonly overTime: SeriesPlan & { readonly truncated: boolean; readonly points: PassPoint[] };
}

type LatestRow = Pick<BatchPointRow, 'batch_id' | 'event_time_ms' | 'groups' | 'pass_at_k_keys' | 'pass_at_k_values' | 'pass_hat_k_keys' | 'pass_hat_k_values'>;

export async function queryPassAtK(store: AnalyticsStore, q: SeriesQuery): Promise<PassAtKResult> {
  const plan = await planSeries(store, q);
  const empty: PassAtKResult = { ks: [], latest: null, overall: { batches: 0, passAtK: {}, passHatK: {} }, byK: [], overTime: { ...plan, truncated: false, points: [] } };
  if (plan.batches === 0) return empty;
  const series =
    plan.bucketMs === null
      ? read<BatchPointRow>(store, batchPointsSql(q)).then((rows) => ({
          truncated: rows.length > q.limit,
          points: rows.slice(0, q.limit).map(
            (row): PassPoint => ({
              timeMs: int(row.event_time_ms),
              batchId: row.batch_id,
              batches: 1,
              passAtK: kMap(row.pass_at_k_keys, row.pass_at_k_values),
              passHatK: kMap(row.pass_hat_k_keys, row.pass_hat_k_values),
            }),
          ),
        }))
      : read<PassKRow>(store, passKSql(q, plan.bucketMs)).then((rows) => ({
          truncated: rows.length > q.limit,
          points: rows.slice(0, q.limit).map((row): PassPoint => ({ timeMs: int(row.bucket_start_ms), batchId: null, batches: int(row.batches), ...passMaps(row) })),
        }));
  const [latestRows, overallRows, overTime] = await Promise.all([read<LatestRow>(store, latestPassKSql(q)), read<PassKRow>(store, passKSql({ ...q, limit: 1 }, null)), series]);
  const latestRow = latestRows[0];
  const latest =
    latestRow === undefined
      ? null
      : {
          batchId: latestRow.batch_id,
          eventTimeMs: int(latestRow.event_time_ms),
          groups: int(latestRow.groups),
          passAtK: kMap(latestRow.pass_at_k_keys, latestRow.pass_at_k_values),
          passHatK: kMap(latestRow.pass_hat_k_keys, latestRow.pass_hat_k_values),
        };
  const overallRow = overallRows[0];
  const overall = overallRow === undefined ? empty.overall : { batches: int(overallRow.batches), ...passMaps(overallRow) };
  const ks = ksOf(overall.passAtK, overall.passHatK, latest?.passAtK ?? {}, latest?.passHatK ?? {});
  const at = (map: PassMap | undefined, k: number): number | null => map?.[String(k)] ?? null;
  return {
    ks,
    latest,
    overall,
    byK: ks.map((k) => ({
      k,
      latestPassAtK: at(latest?.passAtK, k),
      latestPassHatK: at(latest?.passHatK, k),
      overallPassAtK: at(overall.passAtK, k),
      overallPassHatK: at(overall.passHatK, k),
    })),
    overTime: { ...plan, ...overTime },
  };
}
