// Unit: how far a run had got at a time (storage/query/progress.ts) — the step functions of env steps and policy
// versions looked up for each time, their SQL bounded by the run and the times asked — and how the curve, the
// learner steps and the alerts carry it. Against ClickHouse (18.16 and current): test/storage/clickhouse-suite.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { queryAlerts } from '../../../storage/query/alerts.js';
import { queryCurve } from '../../../storage/query/curve.js';
import { learnerMetricsView, queryLearnerMetrics } from '../../../storage/query/learner-metrics.js';
import { envStepsAt, envStepsByTimeSql, progressAt, versionsAt, versionsByTimeSql, type ProgressRow } from '../../../storage/query/progress.js';
import type { AnalyticsStore } from '../../../storage/query/store.js';

/** A store that answers each query by the first pattern its SQL matches, and records the SQL. */
function store(answers: ReadonlyArray<readonly [RegExp, readonly object[]]>): AnalyticsStore & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    queryJson: async <T>(sql: string) => {
      asked.push(sql);
      return (answers.find(([pattern]) => pattern.test(sql))?.[1] ?? []) as T[];
    },
  };
}

test('env steps: the running sum of the steps at or before each time, rounded; null before the first', () => {
  const rows: ProgressRow[] = [
    { time_ms: 0, amount: 10.4 },
    { time_ms: 2000, amount: 5 },
    { time_ms: 3000, amount: 7.2 },
  ];
  assert.deepEqual(progressAt(rows, [3000, 1999, 2000, 10_000], 'sum'), [23, 10, 15, 23]);
  assert.deepEqual(progressAt([{ time_ms: 500, amount: 3 }], [499, 500], 'sum'), [null, 3]);
  assert.deepEqual(progressAt([], [1, 2], 'sum'), [null, null]);
  assert.deepEqual(progressAt(rows, [], 'sum'), []);
});

test('versions: the running maximum; a row without an amount (a non-finite sum) is skipped', () => {
  const rows: ProgressRow[] = [
    { time_ms: 0, amount: 3 },
    { time_ms: 100, amount: null },
    { time_ms: 200, amount: 2 },
    { time_ms: 300, amount: 5 },
  ];
  assert.deepEqual(progressAt(rows, [50, 150, 250, 350], 'max'), [3, 3, 3, 5]);
  assert.deepEqual(progressAt([{ time_ms: 100, amount: null }], [200], 'sum'), [null]);
});

test('property: the lookup agrees with summing the steps at or before each time', () => {
  const step = fc.record({ time_ms: fc.integer({ min: 0, max: 1000 }), amount: fc.integer({ min: 0, max: 50 }) });
  fc.assert(
    fc.property(fc.array(step, { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 1100 }), { maxLength: 20 }), (rows, times) => {
      const expected = times.map((t) => {
        const before = rows.filter((row) => row.time_ms <= t);
        return before.length === 0 ? null : before.reduce((n, row) => n + row.amount, 0);
      });
      assert.deepEqual(progressAt(rows, times, 'sum'), expected);
    }),
  );
});

test('the SQL: one run, batch rows of rollout_stats FINAL or its policy versions, up to the last time, earlier ones pooled at 0', () => {
  const env = envStepsByTimeSql('run-7', 1000, 9000);
  assert.match(env, /FROM rollout_stats FINAL\s+WHERE run_id = 'run-7' AND scope = 'batch' AND event_time_ms <= 9000/);
  assert.match(env, /if\(event_time_ms < 1000, 0, event_time_ms\) AS time_ms, sum\(mean_length \* trajectories\) AS amount/);
  assert.match(env, /GROUP BY time_ms\s+ORDER BY time_ms ASC$/);
  const versions = versionsByTimeSql("it's", 1000, 9000);
  assert.match(versions, /FROM policy_versions\s+WHERE run_id = 'it\\'s' AND created_at_ms <= 9000/);
  assert.match(versions, /max\(version\) AS amount/);
});

test('no times, no query; otherwise one query from the earliest time to the latest', async () => {
  const s = store([[/rollout_stats/, [{ time_ms: 0, amount: 4 }]]]);
  assert.deepEqual(await envStepsAt(s, 'r', []), []);
  assert.equal(s.asked.length, 0);
  assert.deepEqual(await envStepsAt(s, 'r', [5000, 2000]), [4, 4]);
  assert.match(s.asked[0]!, /event_time_ms < 2000, 0,[\s\S]*event_time_ms <= 5000/);
  assert.deepEqual(await versionsAt(store([]), 'r', [1]), [null]);
});

test('learner steps and alerts carry the env steps by their time; the event stream view leaves them null', async () => {
  const stepRow = { step: 0, policy_version: 0, event_time_ms: 2500, metrics_keys: [], metrics_values: [], non_finite: [], has_details: 0 };
  const s = store([
    [/FROM rollout_stats FINAL/, [{ time_ms: 0, amount: 12 }]],
    [/FROM learner_steps FINAL/, [stepRow]],
    [/FROM collapse_alerts FINAL/, [{ alert_id: 'a', event_time_ms: 2600, evidence_keys: [], evidence_values: [] }]],
  ]);
  const window = { runId: 'r', limit: 10, order: 'asc' as const, sinceMs: 0, untilMs: 10_000 };
  assert.equal((await queryLearnerMetrics(s, window)).learnerSteps[0]?.envSteps, 12);
  assert.equal((await queryAlerts(s, window)).alerts[0]?.envSteps, 12);
  assert.equal(learnerMetricsView(stepRow as never).envSteps, null);
});

test('curve points carry the newest policy version published by their newest batch', async () => {
  const batch = (id: string, t: number) => ({
    batch_id: id,
    event_time_ms: t,
    groups: 1,
    trajectories: 2,
    mean_length: 3,
    pass_at_k_keys: [],
    pass_at_k_values: [],
    pass_hat_k_keys: [],
    pass_hat_k_values: [],
  });
  const s = store([
    [/countIf/, [{ batches: 2, first_ms: 1000, last_ms: 3000, env_steps_before: 0 }]],
    [/FROM policy_versions/, [{ time_ms: 2000, amount: 1 }]],
    [/SELECT batch_id/, [batch('b0', 1000), batch('b1', 3000)]],
  ]);
  const curve = await queryCurve(s, { runId: 'r', limit: 10, sinceMs: 0, untilMs: 10_000 });
  assert.deepEqual(
    curve.points.map((p) => [p.policyVersion, p.cumulativeEnvSteps]),
    [
      [null, 6],
      [1, 12],
    ],
  );
});
