// The query builders of the read endpoints: every parameter parsed strictly (a 400 naming it), and the SQL
// built from the parsed values only — bounded by LIMIT, by the time window and by the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HttpProblem } from '../../core/problem.js';
import { ID_PATTERN, MAX_ROWS, routeId, windowParams, readQuery, boolParam, listParam, RUN_WINDOW, CLOCK_SKEW_MS, DAY_MS } from '../../storage/query/params.js';
import { parseRunsQuery, runsSql, RUNS_DEFAULT_WINDOW_MS, RUNS_MAX_IDS, RUNS_MAX_WINDOW_MS } from '../../storage/query/runs.js';
import { autoBucketMs, batchPointsSql, bucketPointsSql, extentSql, parseSeriesQuery, passKSql } from '../../storage/query/curve.js';
import { parseRolloutStatsQuery, rolloutStatsSql } from '../../storage/query/rollout-stats.js';
import { learnerMetricsSql, parseLearnerMetricsQuery } from '../../storage/query/learner-metrics.js';
import { alertsSql, parseAlertsQuery } from '../../storage/query/alerts.js';
import { evaluationsSql, parseEvaluationsQuery, EVALUATIONS_DEFAULT_LIMIT } from '../../storage/query/evaluations.js';
import { latestPassKSql, parsePassAtKQuery } from '../../storage/query/pass-at-k.js';
import {
  episodeRunsSql,
  episodeSamplesSql,
  episodeStepsSql,
  episodeTrajectorySql,
  parseEpisodeQuery,
  parseTrajectoriesQuery,
  trajectoriesSql,
  MAX_EPISODE_STEPS,
} from '../../storage/query/trajectories.js';
import { eventSql, parseEventsQuery, EVENT_TYPES } from '../../storage/query/events.js';
import { parseLagQuery } from '../../storage/query/lag.js';
import { readSql, MAX_EXECUTION_SECONDS } from '../../storage/query/store.js';

const NOW = 1_764_400_000_000;
const RUN = 'run-7';

function rejects(what: string, parse: () => unknown, field: string, status = 400): void {
  assert.throws(parse, (error: unknown) => {
    assert.ok(error instanceof HttpProblem, `${what}: an HttpProblem, got ${String(error)}`);
    assert.equal(error.status, status, what);
    assert.equal(error.problem.field, field, `${what} names ${field}`);
    return true;
  });
}

// ------------------------------------------------------------------------------------------- params

test('route ids: generated ids pass; quotes, spaces, unicode quotes, backslashes, control characters and overlong ids are 400s', () => {
  for (const id of ['run-7', 'run-7/g12/e3', 'local-frozenlake-1', '0b7c1f7e-2a49-4b8e-9c1d-5c2f4a1e9d10', 'a.b_c:d']) assert.equal(routeId('runId', id), id);
  for (const bad of ["x' OR 1=1 --", 'x OR 1=1', 'x\u2019 OR 1', 'x\\', 'x\n', '-leading-dash', '', 'a'.repeat(257), "run'", 'run"', 'run;DROP', 'run`'] as const) {
    rejects(JSON.stringify(bad), () => routeId('runId', bad), 'runId');
  }
  rejects('a repeated id', () => routeId('episodeId', ['a', 'b']), 'episodeId');
});

test('property: anything routeId accepts is made of letters, digits and . _ - : / only (never a quote or backslash)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (raw) => {
      let accepted: string | undefined;
      try {
        accepted = routeId('runId', raw);
      } catch (error) {
        assert.ok(error instanceof HttpProblem && error.status === 400);
        return;
      }
      assert.match(accepted, /^[A-Za-z0-9._:/-]+$/);
    }),
    { numRuns: 2000 },
  );
  assert.ok(ID_PATTERN.test('a'));
});

test('time windows: defaults, sinceMs before untilMs, and at most the window limit', () => {
  const values = (q: Record<string, string>) => readQuery(q, ['sinceMs', 'untilMs']);
  assert.deepEqual(windowParams(values({}), NOW, RUN_WINDOW), { sinceMs: NOW + CLOCK_SKEW_MS - 366 * DAY_MS, untilMs: NOW + CLOCK_SKEW_MS });
  assert.deepEqual(windowParams(values({ sinceMs: '5', untilMs: '10' }), NOW, RUN_WINDOW), { sinceMs: 5, untilMs: 10 });
  rejects('since after until', () => windowParams(values({ sinceMs: '10', untilMs: '10' }), NOW, RUN_WINDOW), 'sinceMs');
  rejects('over a year', () => windowParams(values({ sinceMs: '0', untilMs: String(367 * DAY_MS) }), NOW, RUN_WINDOW), 'sinceMs');
  rejects('until in SQL', () => windowParams(values({ untilMs: '1;DROP TABLE steps' }), NOW, RUN_WINDOW), 'untilMs');
});

test('booleans and lists are strict', () => {
  const values = (q: Record<string, string>) => readQuery(q, ['success', 'types']);
  assert.equal(boolParam(values({ success: 'true' }), 'success'), true);
  assert.equal(boolParam(values({ success: '0' }), 'success'), false);
  assert.equal(boolParam(values({}), 'success'), undefined);
  rejects('yes', () => boolParam(values({ success: 'yes' }), 'success'), 'success');
  assert.deepEqual(listParam(values({ types: 'alert,learner-step' }), 'types', EVENT_TYPES, EVENT_TYPES), ['alert', 'learner-step']);
  rejects('unknown type', () => listParam(values({ types: 'alert,steps' }), 'types', EVENT_TYPES, EVENT_TYPES), 'types');
  rejects('twice', () => listParam(values({ types: 'alert,alert' }), 'types', EVENT_TYPES, EVENT_TYPES), 'types');
});

test('reads run with a server-side time limit', () => {
  assert.equal(readSql('SELECT 1'), `SELECT 1\nSETTINGS max_execution_time = ${MAX_EXECUTION_SECONDS}`);
});

// -------------------------------------------------------------------------------------------- runs

test('runs: defaults to the last 30 days and 100 runs; the SQL unions every table over the window, limit + 1', () => {
  const q = parseRunsQuery({}, NOW);
  assert.deepEqual(q, { limit: 100, sinceMs: NOW + CLOCK_SKEW_MS - RUNS_DEFAULT_WINDOW_MS, untilMs: NOW + CLOCK_SKEW_MS });
  const sql = runsSql({ limit: 5, sinceMs: 100, untilMs: 200 });
  for (const table of ['steps', 'trajectories', 'rollout_stats', 'learner_steps', 'policy_versions']) assert.match(sql, new RegExp(`FROM ${table} WHERE`));
  assert.equal(sql.match(/>= 100 AND \w+ < 200/g)?.length, 5, 'every part is bounded by the window');
  assert.match(sql, /LIMIT 6$/);
});

test('runs: runIds names the runs (each checked, at most RUNS_MAX_IDS, each once) over the widest window by default', () => {
  const q = parseRunsQuery({ runIds: 'run-7,a/b:c' }, NOW);
  assert.deepEqual(q, { limit: 100, sinceMs: NOW + CLOCK_SKEW_MS - RUNS_MAX_WINDOW_MS, untilMs: NOW + CLOCK_SKEW_MS, runIds: ['run-7', 'a/b:c'] });
  const sql = runsSql(q);
  assert.equal(sql.match(/run_id IN \('run-7', 'a\/b:c'\) AND \w+ >= /g)?.length, 5, 'every part reads only the runs named');
  assert.doesNotMatch(runsSql({ limit: 5, sinceMs: 100, untilMs: 200 }), /run_id IN/);
  rejects('a quote', () => parseRunsQuery({ runIds: "run-7,x'y" }, NOW), 'runIds');
  rejects('an empty id', () => parseRunsQuery({ runIds: 'run-7,' }, NOW), 'runIds');
  rejects('twice', () => parseRunsQuery({ runIds: 'a,a' }, NOW), 'runIds');
  rejects('too many', () => parseRunsQuery({ runIds: Array.from({ length: RUNS_MAX_IDS + 1 }, (_, i) => `r${i}`).join(',') }, NOW), 'runIds');
});

const runsBad: Array<[string, Record<string, unknown>, string]> = [
  ['limit over the cap', { limit: String(MAX_ROWS + 1) }, 'limit'],
  ['limit with SQL', { limit: '1;DROP TABLE steps' }, 'limit'],
  ['a runId filter (not a parameter here)', { runId: 'x' }, 'runId'],
  ['a window over a year', { sinceMs: '0', untilMs: String(NOW) }, 'sinceMs'],
];
for (const [what, query, field] of runsBad) test(`runs: ${what} is a 400 naming ${field}`, () => rejects(what, () => parseRunsQuery(query, NOW), field));

// ------------------------------------------------------------------------------------------- curve

test('curve: parameters, and SQL over rollout_stats FINAL batch rows of the run only', () => {
  const q = parseSeriesQuery(RUN, { sinceMs: '1000', untilMs: '9000', bucketMs: '2000', limit: '50' }, NOW);
  assert.deepEqual(q, { runId: RUN, limit: 50, sinceMs: 1000, untilMs: 9000, bucketMs: 2000 });
  assert.equal(parseSeriesQuery(RUN, {}, NOW).bucketMs, undefined);
  const where = /FROM rollout_stats FINAL\s+WHERE run_id = 'run-7' AND scope = 'batch' AND event_time_ms >= 1000 AND event_time_ms < 9000/;
  assert.match(batchPointsSql(q), where);
  assert.match(batchPointsSql(q), /ORDER BY event_time_ms ASC, batch_id ASC\nLIMIT 51$/);
  assert.match(bucketPointsSql(q, 2000), where);
  assert.match(bucketPointsSql(q, 2000), /intDiv\(event_time_ms, 2000\) \* 2000 AS bucket_start_ms/);
  assert.match(bucketPointsSql(q, 2000), /GROUP BY bucket_start_ms\s+ORDER BY bucket_start_ms ASC\s+LIMIT 51$/);
  assert.match(passKSql(q, 2000), /ARRAY JOIN/);
  assert.match(passKSql(q, 2000), /LIMIT 51$/);
  assert.match(passKSql(q, null), /SELECT 0 AS bucket_start_ms/);
  const extent = extentSql(q);
  assert.match(extent, /WHERE run_id = 'run-7' AND scope = 'batch' AND event_time_ms < 9000/);
  assert.match(extent, /countIf\(event_time_ms >= 1000\)/);
});

const curveBad: Array<[string, Record<string, unknown>, string]> = [
  ['bucketMs below a second', { bucketMs: '999' }, 'bucketMs'],
  ['bucketMs over a year', { bucketMs: String(367 * DAY_MS) }, 'bucketMs'],
  ['bucketMs fractional', { bucketMs: '1500.5' }, 'bucketMs'],
  ['limit 0', { limit: '0' }, 'limit'],
  ['limit 5000', { limit: '5000' }, 'limit'],
  ['an unknown parameter', { scope: 'group' }, 'scope'],
  ['sinceMs with a quote', { sinceMs: "0' OR '1'='1" }, 'sinceMs'],
];
for (const [what, query, field] of curveBad) test(`curve: ${what} is a 400 naming ${field}`, () => rejects(what, () => parseSeriesQuery(RUN, query, NOW), field));

test('automatic buckets: whole seconds, and never more buckets than the limit', () => {
  assert.equal(autoBucketMs(0, 1000), 1000);
  assert.equal(autoBucketMs(10 * 60_000, 100), Math.ceil(600_000 / 98 / 1000) * 1000);
  for (const [span, limit] of [
    [999_999, 10],
    [86_400_000, 1000],
    [1_234_567, 3],
    [5000, 7],
  ] as const) {
    const bucket = autoBucketMs(span, limit);
    assert.equal(bucket % 1000, 0);
    // Worst case alignment: the span starts just before a bucket boundary.
    const worst = Math.floor((bucket - 1 + span) / bucket) - Math.floor((bucket - 1) / bucket) + 1;
    assert.ok(worst <= limit, `span ${span}, limit ${limit}: ${worst} buckets of ${bucket}`);
  }
});

// ----------------------------------------------------------------------------------- rollout-stats

test('rollout-stats: scope, filters, order and limit reach the SQL as checked literals', () => {
  const q = parseRolloutStatsQuery(RUN, { scope: 'group', limit: '10', sinceMs: '1', untilMs: '2', order: 'desc', batchId: 'batch-abc', groupId: 'run-7/g1' }, NOW);
  const sql = rolloutStatsSql(q);
  assert.match(
    sql,
    /FROM rollout_stats FINAL\s+WHERE run_id = 'run-7' AND scope = 'group' AND event_time_ms >= 1 AND event_time_ms < 2 AND batch_id = 'batch-abc' AND group_id = 'run-7\/g1'/,
  );
  assert.match(sql, /ORDER BY event_time_ms DESC, batch_id DESC, group_id DESC\nLIMIT 11$/);
  assert.equal(parseRolloutStatsQuery(RUN, {}, NOW).scope, 'batch');
  assert.equal(parseRolloutStatsQuery(RUN, {}, NOW).order, 'asc');
});

const rolloutBad: Array<[string, Record<string, unknown>, string]> = [
  ['a scope that is not batch or group', { scope: 'all' }, 'scope'],
  ['a batchId with a quote', { batchId: "b' OR 1=1 --" }, 'batchId'],
  ['a groupId with a unicode quote', { groupId: 'g\u2018x' }, 'groupId'],
  ['an order that is SQL', { order: 'asc; DROP TABLE rollout_stats' }, 'order'],
  ['limit over the cap', { limit: '1001' }, 'limit'],
];
for (const [what, query, field] of rolloutBad) test(`rollout-stats: ${what} is a 400 naming ${field}`, () => rejects(what, () => parseRolloutStatsQuery(RUN, query, NOW), field));

// --------------------------------------------------------------------------------- learner-metrics

test('learner-metrics: learner_steps FINAL joined with its details, both bounded by run and window', () => {
  const q = parseLearnerMetricsQuery(RUN, { limit: '20', sinceMs: '10', untilMs: '20', order: 'desc' }, NOW);
  const sql = learnerMetricsSql(q);
  assert.match(sql, /FROM learner_steps FINAL\s+ANY LEFT JOIN \(/);
  assert.match(sql, /FROM learner_step_details FINAL\s+WHERE run_id = 'run-7' AND event_time_ms >= 10 AND event_time_ms < 20/);
  assert.match(sql, /USING \(run_id, step\)\s+WHERE run_id = 'run-7' AND event_time_ms >= 10 AND event_time_ms < 20/);
  assert.match(sql, /isFinite\(total_loss\)/);
  assert.match(sql, /ORDER BY step DESC\nLIMIT 21$/);
  rejects('limit -1', () => parseLearnerMetricsQuery(RUN, { limit: '-1' }, NOW), 'limit');
  rejects('an unknown filter', () => parseLearnerMetricsQuery(RUN, { step: '3' }, NOW), 'step');
});

// ------------------------------------------------------------------------------------- evaluations

test('evaluations: evaluations FINAL of the run in the window, by policy version, limit + 1', () => {
  const q = parseEvaluationsQuery(RUN, { limit: '20', sinceMs: '10', untilMs: '20', order: 'desc' }, NOW);
  const sql = evaluationsSql(q);
  assert.match(sql, /FROM evaluations FINAL\s+WHERE run_id = 'run-7' AND event_time_ms >= 10 AND event_time_ms < 20\n/);
  assert.match(sql, /ORDER BY policy_version DESC\nLIMIT 21$/);
  const defaults = parseEvaluationsQuery(RUN, {}, NOW);
  assert.deepEqual([defaults.order, defaults.limit], ['asc', EVALUATIONS_DEFAULT_LIMIT]);
  assert.deepEqual([defaults.sinceMs, defaults.untilMs], [NOW + CLOCK_SKEW_MS - RUN_WINDOW.defaultWindowMs, NOW + CLOCK_SKEW_MS]);
  assert.match(evaluationsSql(defaults), /ORDER BY policy_version ASC\nLIMIT 1001$/);
  rejects('an order that is SQL', () => parseEvaluationsQuery(RUN, { order: 'asc; DROP TABLE evaluations' }, NOW), 'order');
  rejects('limit over the cap', () => parseEvaluationsQuery(RUN, { limit: String(MAX_ROWS + 1) }, NOW), 'limit');
  rejects('a window over a year', () => parseEvaluationsQuery(RUN, { sinceMs: '0', untilMs: String(367 * DAY_MS) }, NOW), 'sinceMs');
  rejects('an unknown filter', () => parseEvaluationsQuery(RUN, { policyVersion: '3' }, NOW), 'policyVersion');
});

// ------------------------------------------------------------------------------------------ alerts

test('alerts: newest first by default; kind and severity filters are checked', () => {
  const q = parseAlertsQuery(RUN, { kind: 'entropy_collapse', severity: 'critical' }, NOW);
  assert.equal(q.order, 'desc');
  const sql = alertsSql({ ...q, sinceMs: 0, untilMs: 5 });
  assert.match(sql, /FROM collapse_alerts FINAL\s+ANY LEFT JOIN/);
  assert.match(sql, /FROM collapse_alert_evidence FINAL/);
  assert.match(sql, /AND kind = 'entropy_collapse' AND severity = 'critical'/);
  assert.match(sql, /ORDER BY event_time_ms DESC, alert_id DESC\nLIMIT 101$/);
  rejects('a kind with a quote', () => parseAlertsQuery(RUN, { kind: "nan' OR '1" }, NOW), 'kind');
  rejects('a severity in capitals', () => parseAlertsQuery(RUN, { severity: 'WARNING' }, NOW), 'severity');
});

// ---------------------------------------------------------------------------------------- pass@k

test('pass-at-k: the latest batch with pass values, and the same parameters as the curve', () => {
  const q = parsePassAtKQuery(RUN, { sinceMs: '0', untilMs: '100' }, NOW);
  assert.match(latestPassKSql(q), /AND length\(pass_at_k_keys\) \+ length\(pass_hat_k_keys\) > 0\s+ORDER BY event_time_ms DESC, batch_id DESC\s+LIMIT 1$/);
  rejects('bucketMs as text', () => parsePassAtKQuery(RUN, { bucketMs: 'hour' }, NOW), 'bucketMs');
});

// ------------------------------------------------------------------------------------ trajectories

test('trajectories: success, outcome and group filters; newest first; limit + 1', () => {
  const q = parseTrajectoriesQuery(RUN, { success: 'false', outcome: 'truncated', groupId: 'run-7/g3', limit: '5', sinceMs: '0', untilMs: '10' }, NOW);
  const sql = trajectoriesSql(q);
  assert.match(sql, /FROM trajectories FINAL\s+ANY LEFT JOIN/);
  assert.match(sql, /WHERE run_id = 'run-7' AND last_event_time_ms >= 0 AND last_event_time_ms < 10 AND group_id = 'run-7\/g3' AND success = 0 AND outcome = 'truncated'/);
  assert.match(sql, /ORDER BY last_event_time_ms DESC, episode_id DESC\nLIMIT 6$/);
  assert.doesNotMatch(trajectoriesSql(parseTrajectoriesQuery(RUN, {}, NOW)), /success =|outcome =/);
  rejects('success=maybe', () => parseTrajectoriesQuery(RUN, { success: 'maybe' }, NOW), 'success');
  rejects('an outcome not in the enum', () => parseTrajectoriesQuery(RUN, { outcome: 'crashed' }, NOW), 'outcome');
});

test('one episode: runId from the path or the query; the SQL reads steps, trajectory and samples of that run and episode', () => {
  assert.deepEqual(parseEpisodeQuery('run-7/g1/e0', {}), { episodeId: 'run-7/g1/e0' });
  assert.deepEqual(parseEpisodeQuery('run-7/g1/e0', { runId: RUN }), { episodeId: 'run-7/g1/e0', runId: RUN });
  assert.deepEqual(parseEpisodeQuery('e0', {}, RUN), { episodeId: 'e0', runId: RUN });
  rejects('a runId query on the nested route', () => parseEpisodeQuery('e0', { runId: RUN }, RUN), 'runId');
  rejects('a runId with a quote', () => parseEpisodeQuery('e0', { runId: "x' OR 1=1 --" }), 'runId');
  const where = /WHERE run_id = 'run-7' AND episode_id = 'run-7\/g1\/e0'/;
  assert.match(episodeStepsSql(RUN, 'run-7/g1/e0'), where);
  assert.match(episodeStepsSql(RUN, 'run-7/g1/e0'), new RegExp(`ORDER BY step_index ASC, event_time_ms ASC, event_id ASC\\nLIMIT ${MAX_EPISODE_STEPS + 1}$`));
  assert.match(episodeTrajectorySql(RUN, 'run-7/g1/e0'), where);
  assert.match(episodeSamplesSql(RUN, 'run-7/g1/e0'), /FROM samples_by_episode FINAL\s+ANY LEFT JOIN \(\s+SELECT run_id, sample_id, toUInt8\(1\) AS has_tokens/);
  assert.match(episodeSamplesSql(RUN, 'run-7/g1/e0'), /LIMIT 10$/);
  assert.match(episodeRunsSql('e0'), /episode_id = 'e0'/);
});

// ---------------------------------------------------------------------------------- events and lag

test('events: runId is required and checked; types default to all; Last-Event-ID resumes a lookback before it', () => {
  rejects('no runId', () => parseEventsQuery({}, undefined), 'runId');
  rejects('a runId with SQL', () => parseEventsQuery({ runId: "x' OR 1=1 --" }, undefined), 'runId');
  rejects('a sinceMs with SQL', () => parseEventsQuery({ runId: RUN, sinceMs: '0 OR 1=1' }, undefined), 'sinceMs');
  assert.deepEqual(parseEventsQuery({ runId: RUN }, undefined), { runId: RUN, types: EVENT_TYPES });
  assert.deepEqual(parseEventsQuery({ runId: RUN, types: 'alert' }, '500000', 1000), { runId: RUN, types: ['alert'], sinceMs: 499_000 });
  assert.deepEqual(parseEventsQuery({ runId: RUN }, 'not-a-number'), { runId: RUN, types: EVENT_TYPES }, 'a foreign Last-Event-ID is ignored');
  for (const type of EVENT_TYPES) {
    const sql = eventSql(type, RUN, 1234, 50);
    assert.match(sql, /run_id = 'run-7'/);
    assert.match(sql, /event_time_ms >= 1234/);
    assert.match(sql, /AS key/);
    assert.match(sql, /ORDER BY event_time_ms ASC, key ASC\nLIMIT 50$/);
  }
  assert.match(eventSql('rollout-stats', RUN, 0), /scope = 'batch'/);
});

test('lag: the group filter is checked', () => {
  assert.deepEqual(parseLagQuery({}), {});
  assert.deepEqual(parseLagQuery({ group: 'trajflow.sink' }), { group: 'trajflow.sink' });
  rejects('a group with a space', () => parseLagQuery({ group: 'a b' }), 'group');
  rejects('an unknown parameter', () => parseLagQuery({ topic: 'x' }), 'topic');
});
