// Event → row mapping: every event kind, column names exactly those of the migrations, values converted
// per the conventions (maps as sorted parallel arrays, nullable arrays as flag + array, booleans 0/1, ms times).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { listMigrations, splitStatements } from '../../../infra/clickhouse/migrations.js';
import { topicSpecs } from '../../../infra/topics.js';
import { eventNames } from '../../../schemas/index.js';
import { sampleEvents } from '../../../bench/load/events.js';
import { eventRows, float, jsonEachRowBody, sinkTopics, tableKeys, tableNames, type KafkaSource, type TableName, type TableRow } from '../../../storage/sink/rows.js';

const source: KafkaSource = { topic: 'trajflow.x', partition: 2, offset: '12345' };

/** Column names per table, read from the CREATE TABLE and ALTER TABLE … ADD COLUMN … AFTER statements of the migrations. */
function migrationColumns(): Map<string, { columns: string[]; orderBy: string[] }> {
  const tables = new Map<string, { columns: string[]; orderBy: string[] }>();
  for (const migration of listMigrations()) {
    for (const statement of splitStatements(readFileSync(migration.file, 'utf8'))) {
      const added = /^ALTER TABLE (\w+) ADD COLUMN (\w+) [\s\S]* AFTER (\w+)$/.exec(statement);
      if (added) {
        const table = tables.get(added[1]!)!.columns;
        table.splice(table.indexOf(added[3]!) + 1, 0, added[2]!);
        continue;
      }
      const match = /^CREATE TABLE IF NOT EXISTS (\w+) \(([\s\S]*)\) ENGINE[\s\S]*ORDER BY \(?([^)]*)\)?$/.exec(statement);
      if (!match) continue;
      const columns = match[2]!
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '')
        .map((line) => line.split(/\s+/)[0]!);
      tables.set(match[1]!, { columns, orderBy: match[3]!.split(',').map((c) => c.trim()) });
    }
  }
  return tables;
}

const columns = migrationColumns();

function rowsOf(rows: TableRow[], table: TableName): Record<string, unknown> {
  const found = rows.filter((r) => r.table === table);
  assert.equal(found.length, 1, `one ${table} row`);
  return found[0]!.row;
}

test('every table the sink writes exists in the migrations with exactly the row keys, and tableKeys is its ORDER BY', () => {
  for (const table of tableNames) {
    const spec = columns.get(table);
    assert.ok(spec, `table ${table} is created by a migration`);
    assert.deepEqual(tableKeys[table], spec.orderBy, `${table} key`);
  }
  for (const event of eventNames) {
    for (const { table, row } of eventRows(event, sampleEvents[event], source, { includeSampleTokens: true })) {
      assert.deepEqual(Object.keys(row), columns.get(table)!.columns, `${event} → ${table}: keys are the columns, in order`);
      assert.equal(row.kafka_topic, 'trajflow.x');
      assert.equal(row.kafka_partition, 2);
      assert.equal(row.kafka_offset, 12345);
    }
  }
});

test('the sink reads every event from a topic that infra/topics.ts creates', () => {
  const topics = new Set(topicSpecs.map((spec) => spec.name));
  for (const event of eventNames) assert.ok(topics.has(sinkTopics[event]), `${event}: topic ${sinkTopics[event]} is in topicSpecs`);
  assert.equal(sinkTopics.evaluation, 'evaluations');
});

test('step → steps', () => {
  const e = sampleEvents.step;
  const row = rowsOf(eventRows('step', e, source), 'steps');
  assert.equal(row.event_id, e.eventId);
  assert.equal(row.step_index, e.stepIndex);
  assert.equal(row.has_observation_token_ids, 1);
  assert.deepEqual(row.observation_token_ids, e.observationTokenIds);
  assert.deepEqual(row.action_log_probs, e.actionLogProbs);
  assert.equal(row.terminated, 0);
  assert.equal(row.action_valid, 1);
  assert.equal(row.state_key, e.stateKey);
  assert.deepEqual(row.metrics_keys, ['generationMs', 'outputTokens']);
  assert.deepEqual(row.metrics_values, [e.metrics.generationMs, e.metrics.outputTokens]);
  assert.deepEqual(row.info_keys, ['map', 'move']);
  assert.deepEqual(row.info_values, [e.info.map, e.info.move]);
  assert.equal(row.event_time_ms, e.eventTimeMs);

  const bare = rowsOf(eventRows('step', { ...e, observationTokenIds: null, stateKey: null, metrics: {}, info: {} }, source), 'steps');
  assert.equal(bare.has_observation_token_ids, 0);
  assert.deepEqual(bare.observation_token_ids, []);
  assert.equal(bare.state_key, null);
  assert.deepEqual([bare.metrics_keys, bare.metrics_values, bare.info_keys, bare.info_values], [[], [], [], []]);
});

test('trajectory → trajectories + trajectory_metrics (steps are not repeated)', () => {
  const e = sampleEvents.trajectory;
  const rows = eventRows('trajectory', e, source);
  assert.equal(rows.length, 2);
  const t = rowsOf(rows, 'trajectories');
  assert.equal(t.outcome, 'terminated');
  assert.equal(t.step_count, 3);
  assert.equal(t.success, 1);
  assert.equal(t.first_event_time_ms, e.firstEventTimeMs);
  const m = rowsOf(rows, 'trajectory_metrics');
  assert.deepEqual(m.metrics_keys, ['durationMs', 'meanActionTokens']);
  assert.deepEqual(m.metrics_values, [812.5, 68]);
  // An outcome newer than the Enum8 column is stored as 'incomplete'.
  assert.equal(rowsOf(eventRows('trajectory', { ...e, outcome: 'aborted' }, source), 'trajectories').outcome, 'incomplete');
});

test('sample → samples with counts only by default; sample_tokens when configured', () => {
  const e = sampleEvents.sample;
  const plain = eventRows('sample', e, source);
  assert.deepEqual(
    plain.map((r) => r.table),
    ['samples'],
  );
  const s = plain[0]!.row;
  assert.equal(s.token_count, e.tokenIds.length);
  assert.equal(s.loss_token_count, e.lossMask.filter((m) => m === 1).length);
  assert.ok((s.loss_token_count as number) > 0 && (s.loss_token_count as number) < e.tokenIds.length);
  assert.equal(s.group_reward_std, e.groupRewardStd);

  const full = eventRows('sample', e, source, { includeSampleTokens: true });
  assert.deepEqual(
    full.map((r) => r.table),
    ['samples', 'sample_tokens'],
  );
  const t = rowsOf(full, 'sample_tokens');
  assert.deepEqual(t.token_ids, e.tokenIds);
  assert.deepEqual(t.loss_mask, e.lossMask);
  assert.deepEqual(t.advantages, e.advantages);
  assert.deepEqual(t.behaviour_log_probs, e.behaviourLogProbs);
  assert.equal(t.has_step_advantages, 0);
  assert.deepEqual(t.step_advantages, []);
  const gigpo = rowsOf(eventRows('sample', { ...e, stepAdvantages: [0.5, -0.25] }, source, { includeSampleTokens: true }), 'sample_tokens');
  assert.equal(gigpo.has_step_advantages, 1);
  assert.deepEqual(gigpo.step_advantages, [0.5, -0.25]);
});

test('learner_step → learner_steps + learner_step_details; non-finite floats as nan/inf strings', () => {
  const e = sampleEvents.learner_step;
  const rows = eventRows('learner_step', e, source);
  const l = rowsOf(rows, 'learner_steps');
  assert.equal(l.step, 41);
  assert.equal(l.grad_norm_pre_clip, 1.87);
  assert.equal(l.tokens, 65_536);
  const d = rowsOf(rows, 'learner_step_details');
  assert.equal(d.clip_fraction_low, 0.021);
  assert.equal(d.backend, 'wasm');
  assert.deepEqual(d.metrics_keys, ['advantageAbsMean', 'reward/mean', 'reward/std']);
  assert.deepEqual(d.metrics_values, [0.37, 0.31, 0.42]);

  const diverged = eventRows('learner_step', { ...e, totalLoss: NaN, gradNormPreClip: Infinity, clipFractionLow: null, metrics: { x: -Infinity } }, source);
  assert.equal(rowsOf(diverged, 'learner_steps').total_loss, 'nan');
  assert.equal(rowsOf(diverged, 'learner_steps').grad_norm_pre_clip, 'inf');
  assert.equal(rowsOf(diverged, 'learner_step_details').clip_fraction_low, null);
  assert.deepEqual(rowsOf(diverged, 'learner_step_details').metrics_values, ['-inf']);
  assert.deepEqual([float(1.5), float(NaN), float(Infinity), float(-Infinity)], [1.5, 'nan', 'inf', '-inf']);
});

test('policy_version → policy_versions + policy_version_metrics', () => {
  const e = sampleEvents.policy_version;
  const rows = eventRows('policy_version', e, source);
  const p = rowsOf(rows, 'policy_versions');
  assert.equal(p.version, 42);
  assert.equal(p.parent_version, 41);
  assert.equal(p.checksum, e.checksum);
  assert.equal(p.created_at_ms, e.createdAtMs);
  assert.deepEqual(rowsOf(rows, 'policy_version_metrics').metrics_values, [0.62]);
  assert.equal(rowsOf(eventRows('policy_version', { ...e, parentVersion: null }, source), 'policy_versions').parent_version, null);
});

test('collapse_alert → collapse_alerts + collapse_alert_evidence', () => {
  const e = sampleEvents.collapse_alert;
  const rows = eventRows('collapse_alert', e, source);
  const a = rowsOf(rows, 'collapse_alerts');
  assert.equal(a.alert_id, e.alertId);
  assert.equal(a.kind, 'reward_variance_cliff');
  assert.equal(a.threshold, 0.05);
  const ev = rowsOf(rows, 'collapse_alert_evidence');
  assert.deepEqual(ev.evidence_keys, ['groupsWithZeroStd', 'previousWindowMean', 'windowMean']);
  assert.deepEqual(ev.evidence_values, [0.81, 0.21, 0.03]);
});

test('rollout_stats → rollout_stats (group_id "" for a batch)', () => {
  const e = sampleEvents.rollout_stats;
  const r = rowsOf(eventRows('rollout_stats', e, source), 'rollout_stats');
  assert.equal(r.scope, 'batch');
  assert.equal(r.group_id, '');
  assert.deepEqual(r.pass_at_k_keys, ['1', '4']);
  assert.deepEqual(r.pass_at_k_values, [0.34375, 0.8125]);
  assert.deepEqual(r.pass_hat_k_values, [0.34375, 0.0125]);
  assert.deepEqual(r.dropped_by_reason_keys, ['dynamic_sampling:all_rewards_equal']);
  assert.deepEqual(r.dropped_by_reason_values, [2]);
  assert.deepEqual(r.closed_by_keys, ['full', 'timeout']);
  assert.deepEqual(r.closed_by_values, [7, 1]);
  assert.equal(rowsOf(eventRows('rollout_stats', { ...e, scope: 'group', groupId: 'group-3' }, source), 'rollout_stats').group_id, 'group-3');
});

test('evaluation → evaluations, every field in snake_case; -1 markers kept; non-finite floats as nan/inf strings', () => {
  const e = sampleEvents.evaluation;
  const rows = eventRows('evaluation', e, source);
  assert.deepEqual(
    rows.map((r) => r.table),
    ['evaluations'],
  );
  assert.deepEqual(rowsOf(rows, 'evaluations'), {
    run_id: e.runId,
    policy_version: 42,
    trained_iteration: 41,
    env_steps: 187_392,
    env_name: 'FrozenLake',
    env_options: '{"slippery":false}',
    tasks: 200,
    greedy_success: 0.62,
    mean_reward: 0.62,
    mean_steps: 7.35,
    random_success: 0.015,
    duration_ms: 4_210.5,
    event_time_ms: e.eventTimeMs,
    kafka_topic: 'trajflow.x',
    kafka_partition: 2,
    kafka_offset: 12345,
  });
  const first = rowsOf(eventRows('evaluation', { ...e, policyVersion: 0, trainedIteration: -1, envSteps: -1, meanReward: NaN, durationMs: Infinity }, source), 'evaluations');
  assert.deepEqual([first.policy_version, first.trained_iteration, first.env_steps], [0, -1, -1]);
  assert.deepEqual([first.mean_reward, first.duration_ms], ['nan', 'inf']);
});

test('dead_letter → dead_letters with the raw bytes, written byte for byte into JSONEachRow', () => {
  const e = { ...sampleEvents.dead_letter, payload: Buffer.from([0xc3, 0x01, 0xff, 0x00, 0x22, 0x5c, 0x0a, 0x80]) };
  const row = rowsOf(eventRows('dead_letter', e, source), 'dead_letters');
  assert.equal(row.source_offset, 18_204);
  assert.ok(Buffer.isBuffer(row.payload));
  const body = jsonEachRowBody([row as never]);
  assert.ok(Buffer.isBuffer(body));
  const expected = Buffer.concat([
    Buffer.from('"payload":"'),
    Buffer.from([0xc3]),
    Buffer.from('\\u0001'),
    Buffer.from([0xff]),
    Buffer.from('\\u0000\\"\\\\\\u000a'),
    Buffer.from([0x80]),
    Buffer.from('"'),
  ]);
  assert.ok((body as Buffer).includes(expected), (body as Buffer).toString('latin1'));
  assert.ok((body as Buffer).includes('"key":"group-0"'));
  // Without binary cells the body is plain JSON lines.
  const plain = jsonEachRowBody(eventRows('step', sampleEvents.step, source).map((r) => r.row));
  assert.equal(typeof plain, 'string');
  assert.deepEqual(JSON.parse(plain as string).event_id, sampleEvents.step.eventId);
});
