// The detectors over a run stored in ClickHouse 18.16 (rows as the sink writes them, in a database of the
// test's own): historicalAlerts agrees with the live operator, and the SQL-only grad-norm rule computes the
// same robust z as the detector.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { from, lastValueFrom, toArray } from 'rxjs';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { eventRows, type TableName } from '../../storage/sink/rows.js';
import { buildDetectorsConfig, WITHOUT_TRAJECTORIES } from '../../detectors/config.js';
import { detectCollapse } from '../../detectors/detect-collapse.js';
import type { DetectorInput } from '../../detectors/engine.js';
import { gradNormSpikeSql, historicalAlerts } from '../../detectors/history.js';
import { GradNormSpikeDetector } from '../../detectors/grad-norm-spike.js';
import { learnerPoints, learnerStepEvent, rolloutBatchEvent, rolloutBatches } from './synthetic.js';

const databases: string[] = [];
after(async () => {
  const server = clickHouseClient(loadConfig(), null);
  for (const database of databases) await server.exec(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
});

async function database(): Promise<TrajflowConfig> {
  const base = loadConfig();
  const name = `test_detectors_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  databases.push(name);
  const config = { ...base, clickhouse: { ...base.clickhouse, database: name } };
  await applyMigrations(config);
  return config;
}

test('historicalAlerts over the stored run gives the live alerts; gradNormSpikeSql gives the detector’s z', { timeout: 60_000 }, async () => {
  const config = await database();
  const ch = clickHouseClient(config);
  const runId = 'run-history';
  const points = learnerPoints(100, 4, { spikeAt: 70 });
  points[80] = { ...points[80]!, gradNorm: Number.NaN }; // stored as nan; the 'nan' detector and the SQL skip it alike
  // PPO-KL of each update, in the metrics map the sink stores as two arrays: 0.02, and 2 nats at update 90.
  const steps = points.map((p, i) => {
    const e = learnerStepEvent(runId, i, p);
    return { ...e, metrics: { ...e.metrics, ppoKl: i === 90 ? 2 : 0.02 } };
  });
  const batches = rolloutBatches(100, 4, { cliffAt: 40, invalidAt: 80 }).map((b, i) => rolloutBatchEvent(runId, i, b));

  const rows = new Map<TableName, object[]>();
  const store = (event: Parameters<typeof eventRows>[0], value: never, offset: number) => {
    for (const { table, row } of eventRows(event, value, { topic: `t.${event}`, partition: 0, offset: String(offset) })) rows.set(table, [...(rows.get(table) ?? []), row]);
  };
  steps.forEach((e, i) => store('learner_step', e as never, i));
  batches.forEach((e, i) => store('rollout_stats', e as never, i));
  for (const [table, list] of rows) await ch.insertJsonEachRow(table, list);

  const detectors = buildDetectorsConfig(WITHOUT_TRAJECTORIES);
  const inputs: DetectorInput[] = [
    ...steps.map((event): DetectorInput => ({ type: 'learner_step', event })),
    ...batches.map((event): DetectorInput => ({ type: 'rollout_stats', event })),
  ];
  const live = await lastValueFrom(from(inputs).pipe(detectCollapse(detectors), toArray()));
  const history = await historicalAlerts(ch, runId, detectors);
  const byId = (a: { alertId: string }, b: { alertId: string }) => a.alertId.localeCompare(b.alertId);
  assert.deepEqual(history.map((a) => `${a.kind}@${a.learnerStep}`).sort(), [
    'grad_norm_spike@70',
    'invalid_action_rise@81',
    'nan@80',
    'policy_shift_spike@90',
    'reward_variance_cliff@44',
  ]);
  assert.deepEqual(JSON.parse(JSON.stringify(history.sort(byId))), JSON.parse(JSON.stringify(live.sort(byId))));

  const sqlRows = await ch.queryJson<{ step: number; z: number | null; spike: number }>(gradNormSpikeSql(runId));
  const detector = new GradNormSpikeDetector();
  assert.equal(sqlRows.length, 99, 'the NaN norm is left out');
  assert.deepEqual(
    sqlRows.filter((r) => r.spike === 1).map((r) => r.step),
    [70],
  );
  // The same z as the detector at the spike (the detector reports it in its evidence).
  const [alert] = points.flatMap((p, i) => detector.observe({ at: i, gradNorm: p.gradNorm }));
  const at70 = sqlRows.find((r) => r.step === 70)!;
  assert.ok(Math.abs(at70.z! - alert!.evidence.z!) < 1e-9, `SQL z ${at70.z} vs detector z ${alert!.evidence.z}`);
});
