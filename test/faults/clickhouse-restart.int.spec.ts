// Fault suite (issue 8, item 2): ClickHouse is stopped and started again (infra/clickhouse/server.ts, the
// same functions as `trajflow down`/`up`) in the middle of a training run. Training does not need it and
// goes on; the sink retries its inserts without acknowledging anything, and once ClickHouse answers again
// it catches up by itself: every event of the run once in ClickHouse (FINAL), nothing lost. The dashboard
// reports ClickHouse down (degraded, ingest still accepted) and answers reads again afterwards.
//
// ClickHouse is shared with whoever else runs tests on this machine: it is restarted once and always left
// running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../core/config.js';
import { startClickHouse, stopClickHouse } from '../../infra/clickhouse/server.js';
import { waitFor } from '../helpers/kafka.js';
import { actorsDone, createFaultRun, messageCount, startPoster, startTraining, type Poster } from './harness.js';
import { describe, learnerDrops, waitDrained } from './ledger.js';

const config = loadConfig();
const ITERATIONS = 8;
const MIN_SAMPLES = 4;

interface Health {
  status: string;
  checks: { clickhouse: { ok: boolean }; kafka: { ok: boolean } };
}

test('ClickHouse restarted mid-run: training goes on, the sink catches up by itself, every event once in ClickHouse', {
  skip: !config.clickhouse.managed && 'ClickHouse is external (TRAJFLOW_CLICKHOUSE_URL)',
  timeout: 240_000,
}, async () => {
  const run = await createFaultRun('clickhouse');
  const { runId } = run;
  const httpRunId = `${runId}-http`;
  const context = () => run.tails();
  let poster: Poster | undefined;
  try {
    const training = await startTraining(run, { iterations: ITERATIONS });
    const learner = training.learner!;
    const health = async () => (await (await fetch(`${training.dashboardUrl}/health`)).json()) as Health;
    poster = startPoster(() => training.dashboardUrl, httpRunId);
    await learner.waitLine(/learner: update \d+ → v1\b/, 'the first update', 150_000);
    await waitFor(async () => (await run.ch.queryJson<{ n: string }>(`SELECT count() AS n FROM steps`))[0]!.n !== '0', 'the sink to store steps', 60_000, 200);

    const started = Date.now();
    let downAt = 0;
    let upAt = 0;
    let healthWhileDown: Health | undefined;
    let acceptedWhileDown = 0;
    let stepsWhileDown = 0;
    try {
      await stopClickHouse(config);
      downAt = Date.now();
      // While it is down: ingest goes on (202s), /health says degraded, the sink retries without acknowledging.
      const acceptedBefore = poster.state.accepted;
      const stepsAtStop = await messageCount(run, 'env.steps');
      await waitFor(() => training.sink.currentLines().some((l) => /sink: insert into \S+ failed/.test(l)), 'the sink to report failing inserts', 30_000, 100);
      healthWhileDown = await health();
      await waitFor(() => poster!.state.accepted >= acceptedBefore + 2, 'HTTP steps accepted while ClickHouse is down', 30_000, 100);
      acceptedWhileDown = poster.state.accepted - acceptedBefore;
      await waitFor(async () => (await messageCount(run, 'env.steps')) >= stepsAtStop + 60, '60 more steps written while ClickHouse is down', 30_000, 200);
      stepsWhileDown = (await messageCount(run, 'env.steps')) - stepsAtStop;
    } finally {
      await startClickHouse(config);
      upAt = Date.now();
    }
    console.log(
      `fault[ClickHouse restart]: stopped in ${((downAt - started) / 1000).toFixed(1)} s, down ${((upAt - downAt) / 1000).toFixed(1)} s; meanwhile /health ${healthWhileDown?.status} ` +
        `(clickhouse ok ${healthWhileDown?.checks.clickhouse.ok}), ${acceptedWhileDown} HTTP groups accepted, ${stepsWhileDown} steps written to Kafka`,
    );
    assert.equal(healthWhileDown?.status, 'degraded');
    assert.equal(healthWhileDown?.checks.clickhouse.ok, false);

    await waitFor(() => training.sink.currentLines().some((l) => /ClickHouse inserts succeed again/.test(l)), 'the sink to report inserts succeeding again', 60_000, 200);
    await waitFor(() => poster!.acceptedAfter(upAt) >= 2, 'HTTP steps accepted after the restart', 30_000, 100);
    const summary = await actorsDone(training.actors, 180_000);
    await poster.stop();
    const main = await waitDrained(run, runId, { learnerMinSamples: MIN_SAMPLES, learnerDropped: () => learnerDrops(learner.lines), timeoutMs: 120_000, context });
    const http = await waitDrained(run, httpRunId, { timeoutMs: 60_000, context });
    const f = main.figures;
    const after = await health();
    const learnerMetrics = (await (await fetch(`${training.dashboardUrl}/v1/runs/${encodeURIComponent(runId)}/learner-metrics?limit=1000`)).json()) as { count?: number };
    const failedInserts = training.sink.lines.filter((l) => /sink: insert into \S+ failed/.test(l)).length;
    const [raw] = await run.ch.queryJson<{ n: string }>(`SELECT count() AS n FROM steps WHERE run_id IN ('${runId}', '${httpRunId}')`);
    console.log(describe('ClickHouse restart, actors run', f, main.clickhouse));
    console.log(describe('ClickHouse restart, HTTP run', http.figures, http.clickhouse));
    console.log(
      `fault[ClickHouse restart]: steps on Kafka ${f.stepsDistinct + http.figures.stepsDistinct}, in ClickHouse ${main.clickhouse.steps + http.clickhouse.steps} (raw rows ${Number(raw!.n)}), ` +
        `lost ${f.stepsDistinct + http.figures.stepsDistinct - main.clickhouse.steps - http.clickhouse.steps}; sink reported ${failedInserts} failing-insert lines; /health after: ${after.status}; GET learner-metrics ${learnerMetrics.count} rows`,
    );

    for (const part of run.parts.values())
      assert.ok(part.lives === 1 && (part.running || part.child.exitCode === 0), `${part.name} survived the ClickHouse restart:\n${part.tail()}`);
    assert.equal(after.status, 'ok');
    assert.equal(f.stepsSent, summary.steps, "the actors' acknowledged steps are all on the topic");
    for (const [label, figures, ch] of [
      ['actors run', f, main.clickhouse],
      ['HTTP run', http.figures, http.clickhouse],
    ] as const) {
      assert.equal(figures.stepDuplicates + figures.trajectoryDuplicates + figures.sampleDuplicates, 0, `${label}: nothing twice on Kafka`);
      assert.equal(figures.stepsLost, 0, `${label}: every step in a trajectory`);
      assert.equal(ch.steps, figures.stepsDistinct, `${label}: ClickHouse steps FINAL = step events`);
      assert.equal(ch.stepEventIds, figures.stepsDistinct, `${label}: every step event id in ClickHouse`);
      assert.equal(ch.trajectories, figures.episodes, `${label}: ClickHouse trajectories`);
      assert.equal(ch.samples, figures.samplesDistinct, `${label}: ClickHouse samples`);
    }
    assert.equal(main.clickhouse.learnerSteps, f.learnerSteps, 'ClickHouse learner steps');
    assert.equal(main.clickhouse.versions, f.versions.length, 'ClickHouse policy versions');
    assert.deepEqual(f.versionGaps, []);
    assert.equal(f.versionEvents, f.versions.length);
    assert.ok(
      poster.acknowledged.size > 0 && [...poster.acknowledged].every((id) => http.ledger.steps.some((s) => s.eventId === id)),
      'every HTTP step answered 202 is on the topic',
    );
    assert.equal(learnerMetrics.count, f.learnerSteps, 'the dashboard reads the learner metrics from ClickHouse again');
  } finally {
    await poster?.stop();
    // Whatever happened above, the shared server is left running.
    await startClickHouse(config).catch(() => undefined);
    await run.cleanup();
  }
});
