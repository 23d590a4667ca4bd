// End to end (real ClickHouse, real Kafka, real Chromium): the comparison of runs. Three synthetic runs that learn at
// different speeds, take different env steps per batch and started at different times are stored in a database of
// their own (migrations applied, rows inserted through the sink's row mappers, dropped afterwards), as
// dashboard.e2e.spec.ts does. The runs list ticks two runs and opens their comparison; the comparison of three
// draws each run's line on each chart (read back from the canvas pixels in the run's colour), aligns them on env
// steps, policy version and wall time as the API places each row, marks the alerts, keeps the axis and the runs in
// the URL across a reload, and says what is wrong with a run that does not exist, one without data, or a selection
// of too few or too many runs. Its screenshot is the one docs/guides/dashboards.md shows. Waits poll, never sleep.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Admin } from 'kafkajs';
import type { Browser, Page } from 'playwright-core';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { eventRows, jsonEachRowBody, type Row, type TableName } from '../../storage/sink/rows.js';
import type { EventName, EventTypes } from '../../schemas/index.js';
import { connectBackbone, createKafka, type Backbone } from '../../streams/index.js';
import { loadApiConfig } from '../../api/config.js';
import { startHttpServer, type HttpServerHandle } from '../../api/server.js';
import { createApiServices, type ApiServices } from '../../api/services.js';
import { sampleEvents } from '../../bench/load/events.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { DOCS_IMAGES_DIR, launchChromium, openWatchedPage, screenshot, type WatchedPage } from '../helpers/browser.js';

const base = loadConfig();
const hex = randomBytes(3).toString('hex');
const database = `test_compare_${Date.now().toString(36)}_${hex}`;
const config: TrajflowConfig = { ...base, topicPrefix: uniqueName('compare'), clickhouse: { ...base.clickhouse, database } };
/** Ten minutes ago, on a whole second. */
const T0 = Math.floor((Date.now() - 600_000) / 1000) * 1000;
const BATCHES = 6;
/** Policy versions evaluated on held-out tasks. */
const EVALUATED = [0, 2, 4];

/** A synthetic run: when it starts, a batch every intervalMs of 16 trajectories of meanLength turns, success rising by slope. */
interface RunSpec {
  readonly runId: string;
  readonly startMs: number;
  readonly intervalMs: number;
  readonly meanLength: number;
  readonly slope: number;
  /** The learner step an alert is raised at, if any. */
  readonly alertStep?: number;
}

/** The database is the test's own, so the run ids can read as a user's would (and the screenshot stays the same). */
const RUNS: readonly RunSpec[] = [
  { runId: 'frozenlake-grpo-s1', startMs: T0, intervalMs: 20_000, meanLength: 4, slope: 0.15, alertStep: 4 },
  { runId: 'frozenlake-gigpo-s1', startMs: T0 + 60_000, intervalMs: 20_000, meanLength: 6, slope: 0.1, alertStep: 2 },
  { runId: 'frozenlake-grpo-s2', startMs: T0 + 30_000, intervalMs: 25_000, meanLength: 5, slope: 0.12 },
];
const [A, B, C] = RUNS as [RunSpec, RunSpec, RunSpec];
/** A run with a step but no batch, learner step or evaluation; and an id nothing was recorded under. */
const EMPTY = 'frozenlake-empty';
const MISSING = 'no-such-run';
/** The colours the page gives the first three runs of a selection (web/static/compare-data.js), and one it does not. */
const COLORS = ['#1f6feb', '#d1242f', '#1a7f37'];
const UNUSED_COLOR = '#8250df';
const CHARTS = ['reward', 'success', 'held-out', 'entropy', 'kl', 'in-group-std'];

const TRAJECTORIES = 16;
const perBatch = (run: RunSpec) => TRAJECTORIES * run.meanLength;
const batchTime = (run: RunSpec, i: number) => run.startMs + run.intervalMs * (i + 1);
/** Learner step i (on version i) 10 s after batch i; version i + 1 published 2 s after it; version 0 a second after the start. */
const stepTime = (run: RunSpec, i: number) => batchTime(run, i) + 10_000;
const versionTime = (run: RunSpec, v: number) => (v === 0 ? run.startMs + 1000 : batchTime(run, v - 1) + 12_000);

let backbone: Backbone;
let admin: Admin;
let services: ApiServices;
let server: HttpServerHandle;
let browser: Browser;
const serverLogs: string[] = [];
const pages: WatchedPage[] = [];
let offset = 0;

async function insert<N extends EventName>(event: N, values: ReadonlyArray<EventTypes[N]>): Promise<void> {
  const byTable = new Map<TableName, Row[]>();
  for (const value of values) {
    for (const { table, row } of eventRows(event, value, { topic: 'test', partition: 0, offset: String(offset++) }, { includeSampleTokens: false })) {
      byTable.set(table, [...(byTable.get(table) ?? []), row]);
    }
  }
  for (const [table, rows] of byTable) {
    const query = new URLSearchParams({ database, query: `INSERT INTO ${table} FORMAT JSONEachRow` });
    const body = jsonEachRowBody(rows);
    const response = await fetch(`${config.clickhouse.url}/?${query}`, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body) });
    assert.equal(response.status, 200, `INSERT INTO ${table}: ${await response.text()}`);
  }
}

const success = (run: RunSpec, i: number) => Math.min(1, 0.05 + run.slope * i);

/** The run's rollout batches and the policy versions published between them. */
async function insertRollouts(run: RunSpec): Promise<void> {
  await insert(
    'rollout_stats',
    Array.from({ length: BATCHES }, (_, i) => ({
      ...sampleEvents.rollout_stats,
      runId: run.runId,
      batchId: `${run.runId}-batch-${i}`,
      groups: 4,
      trajectories: TRAJECTORIES,
      rewardMean: success(run, i),
      rewardStd: 0.3,
      meanInGroupRewardStd: Math.max(0.02, 0.45 - run.slope * 0.5 * i),
      successRate: success(run, i),
      meanLength: run.meanLength,
      droppedGroups: 0,
      droppedByReason: {},
      closedBy: { full: 4 },
      eventTimeMs: batchTime(run, i),
    })),
  );
  await insert(
    'policy_version',
    Array.from({ length: BATCHES + 1 }, (_, v) => ({
      ...sampleEvents.policy_version,
      runId: run.runId,
      version: v,
      parentVersion: v === 0 ? null : v - 1,
      learnerStep: Math.max(0, v - 1),
      metrics: { iteration: v - 1, envSteps: perBatch(run) * v },
      createdAtMs: versionTime(run, v),
    })),
  );
}

/** The run's learner steps, held-out evaluations and (maybe) an alert. */
async function insertLearning(run: RunSpec): Promise<void> {
  await insert(
    'learner_step',
    Array.from({ length: BATCHES }, (_, i) => ({
      ...sampleEvents.learner_step,
      runId: run.runId,
      step: i,
      policyVersion: i,
      entropy: 1.3 - run.slope * i,
      kl: 0.002 + run.slope * 0.01 * i,
      metrics: {},
      eventTimeMs: stepTime(run, i),
    })),
  );
  await insert(
    'evaluation',
    EVALUATED.map((v) => ({
      ...sampleEvents.evaluation,
      runId: run.runId,
      policyVersion: v,
      trainedIteration: v - 1,
      envSteps: perBatch(run) * v,
      greedySuccess: success(run, v + 1),
      randomSuccess: 0.015,
      tasks: 100,
      eventTimeMs: versionTime(run, v) + 3000,
    })),
  );
  if (run.alertStep === undefined) return;
  await insert('collapse_alert', [
    {
      ...sampleEvents.collapse_alert,
      runId: run.runId,
      alertId: `${run.runId}-entropy`,
      kind: 'entropy_collapse',
      severity: 'warning',
      learnerStep: run.alertStep,
      policyVersion: run.alertStep,
      message: 'Entropy fell below its floor.',
      eventTimeMs: stepTime(run, run.alertStep) + 1000,
    },
  ]);
}

before(async () => {
  browser = await launchChromium();
  await applyMigrations(config);
  for (const run of RUNS) {
    await insertRollouts(run);
    await insertLearning(run);
  }
  await insert('step', [{ ...sampleEvents.step, runId: EMPTY, eventId: `${EMPTY}/s0`, groupId: `${EMPTY}/g0`, episodeId: `${EMPTY}/g0/e0`, eventTimeMs: T0 }]);
  admin = createKafka(config, { clientId: 'test-compare-web-admin', quiet: true }).admin();
  await admin.connect();
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'schemas'),
  );
  backbone = await connectBackbone(config, { clientId: 'test-compare-web' });
  services = createApiServices(backbone);
  server = await startHttpServer(loadApiConfig({ port: 0 }, {}), {
    ...services,
    log: (line, error) => serverLogs.push(`${line}${error instanceof Error ? `\n${error.stack}` : ''}`),
  });
});

after(async () => {
  for (const { context } of pages) await context.close().catch(() => undefined);
  await browser?.close();
  await server?.close(500);
  await services?.close();
  if (admin) {
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
    await admin.disconnect();
  }
  await backbone?.close();
  await clickHouseClient(base, null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

/** Opens a page at a hash route and waits for its heading. */
async function open(hash: string, heading: RegExp): Promise<WatchedPage> {
  const watched = await openWatchedPage(browser);
  pages.push(watched);
  await watched.page.goto(`${server.url}/${hash}`);
  await watched.page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 10_000 });
  return watched;
}

function assertClean(watched: WatchedPage, what: string): void {
  assert.deepEqual(watched.errors, [], `${what}: no console errors`);
  assert.deepEqual(serverLogs, [], `${what}: no server errors`);
}

const compareHash = (runIds: readonly string[], x: string) => `#/compare?runs=${runIds.map(encodeURIComponent).join(',')}&x=${x}`;
const hashOf = (page: Page) => decodeURIComponent(new URL(page.url()).hash);

/** Points per run id of a chart, as the figure says it drew them. */
async function runPoints(page: Page, chart: string): Promise<Record<string, number>> {
  return JSON.parse((await page.locator(`[data-chart="${chart}"]`).getAttribute('data-run-points', { timeout: 10_000 })) ?? '{}') as Record<string, number>;
}

/** How many opaque pixels of a chart's canvas are (nearly) each colour: a run's line is drawn in nothing else. */
async function colourCounts(page: Page, chart: string, colors: readonly string[]): Promise<number[]> {
  return page.locator(`[data-chart="${chart}"] canvas`).evaluate((canvas, hexes) => {
    const context = (canvas as HTMLCanvasElement).getContext('2d')!;
    const { data } = context.getImageData(0, 0, (canvas as HTMLCanvasElement).width, (canvas as HTMLCanvasElement).height);
    const targets = hexes.map((hex) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)));
    const counts = targets.map(() => 0);
    for (let p = 0; p < data.length; p += 4) {
      if (data[p + 3]! < 250) continue;
      targets.forEach(([r, g, b], k) => {
        if (Math.abs(data[p]! - r!) <= 16 && Math.abs(data[p + 1]! - g!) <= 16 && Math.abs(data[p + 2]! - b!) <= 16) counts[k]! += 1;
      });
    }
    return counts;
  }, colors);
}

/** Waits until every chart has drawn every run with the points expected, then checks each run's colour is on its canvas. */
async function assertEveryLine(page: Page, runs: readonly RunSpec[], perChart: Readonly<Record<string, number>>): Promise<void> {
  for (const chart of CHARTS) {
    const expected = Object.fromEntries(runs.map((run) => [run.runId, perChart[chart] ?? BATCHES]));
    await waitFor(async () => JSON.stringify(await runPoints(page, chart)) === JSON.stringify(expected), `every run drawn on ${chart}`, 10_000);
    const counts = await colourCounts(page, chart, [...COLORS.slice(0, runs.length), UNUSED_COLOR]);
    counts.slice(0, runs.length).forEach((n, i) => assert.ok(n >= 20, `${chart}: the line of ${runs[i]!.runId} is drawn in ${COLORS[i]} (${n} pixels)`));
    assert.equal(counts.at(-1), 0, `${chart}: nothing is drawn in a colour no run has`);
  }
}

/** The distinct x values of the runs' rollout batches on an axis: what the reward chart's aligned x array holds. */
function unionOf(xs: ReadonlyArray<readonly number[]>): number {
  return new Set(xs.flat()).size;
}

test('the API places each row: curve points by policy version, learner steps and alerts by env steps; runIds reads the runs named', async () => {
  const get = async (path: string) => (await (await fetch(`${server.url}${path}`)).json()) as Record<string, any>;
  const curve = await get(`/v1/runs/${A.runId}/curve`);
  assert.deepEqual(
    curve.points.map((p: any) => [p.policyVersion, p.cumulativeEnvSteps]),
    Array.from({ length: BATCHES }, (_, i) => [i, perBatch(A) * (i + 1)]),
  );
  const learner = await get(`/v1/runs/${A.runId}/learner-metrics`);
  assert.deepEqual(
    learner.learnerSteps.map((s: any) => s.envSteps),
    Array.from({ length: BATCHES }, (_, i) => perBatch(A) * (i + 1)),
  );
  const alerts = await get(`/v1/runs/${B.runId}/alerts`);
  assert.deepEqual(
    alerts.alerts.map((a: any) => a.envSteps),
    [perBatch(B) * (B.alertStep! + 1)],
  );
  const runs = await get(`/v1/runs?runIds=${[A.runId, MISSING, EMPTY].join(',')}`);
  assert.deepEqual(runs.runs.map((r: any) => r.runId).sort(), [A.runId, EMPTY].sort());
  assert.equal(runs.runs.find((r: any) => r.runId === A.runId).firstEventTimeMs, A.startMs + 1000);
});

test('runs list: ticking two runs enables Compare, which opens their comparison with the selection in the URL', async () => {
  const watched = await open('#/', /^Runs$/);
  const { page } = watched;
  const compare = page.getByRole('button', { name: 'Compare' });
  const tick = (run: RunSpec) => page.locator(`input[data-compare-run="${run.runId}"]`);
  await tick(A).waitFor({ timeout: 10_000 });
  assert.equal(await compare.isDisabled(), true, 'nothing ticked');
  await tick(B).check();
  assert.equal(await compare.isDisabled(), true, 'one run ticked');
  assert.match(await page.locator('.compare-bar').innerText(), /Tick 2 to 8 runs/);
  await tick(A).check();
  assert.equal(await compare.isDisabled(), false);
  assert.match(await page.locator('.compare-bar').innerText(), /2 runs ticked/);
  await compare.click();
  await page.getByRole('heading', { level: 1, name: 'Compare runs' }).waitFor();
  assert.equal(hashOf(page), `#/compare?runs=${B.runId},${A.runId}&x=envSteps`, 'the runs in the order ticked, env steps by default');
  await assertEveryLine(page, [B, A], { 'held-out': EVALUATED.length });
  assertClean(watched, 'runs list to comparison');
});

test('three runs by env steps: every run a line on every chart, aligned as the API places them, alerts marked and listed', async () => {
  const watched = await open(compareHash([A.runId, B.runId, C.runId], 'envSteps'), /^Compare runs$/);
  const { page } = watched;
  await assertEveryLine(page, RUNS, { 'held-out': EVALUATED.length });
  const envSteps = RUNS.map((run) => Array.from({ length: BATCHES }, (_, i) => perBatch(run) * (i + 1)));
  assert.equal(await page.locator('[data-chart="reward"]').getAttribute('data-points'), String(unionOf(envSteps)), 'one x array: the union of the runs’ env steps');
  for (const chart of CHARTS) assert.equal(await page.locator(`[data-chart="${chart}"]`).getAttribute('data-markers'), '2', `${chart}: both alerts marked`);
  const legend = page.locator('.compare-legend');
  for (const run of RUNS) {
    const item = legend.locator(`li[data-run-id="${run.runId}"]`);
    assert.equal(await item.getAttribute('data-state'), 'ok');
    assert.match(
      await item.innerText(),
      new RegExp(`${run.runId}[\\s\\S]*FrozenLake[\\s\\S]*6 curve points · 6 learner steps · 3 evaluations · ${run.alertStep === undefined ? 0 : 1} alert`),
    );
  }
  const alerts = page.locator('table.compare-alerts tbody tr');
  assert.equal(await alerts.count(), 2);
  assert.match(await alerts.nth(0).innerText(), new RegExp(`${A.runId}\\s+${perBatch(A) * (A.alertStep! + 1)}\\s+warning\\s+entropy_collapse`));
  assert.match(await page.locator('[data-chart="reward"] .u-legend').innerText(), new RegExp(`Env steps[\\s\\S]*${A.runId}[\\s\\S]*${B.runId}[\\s\\S]*${C.runId}`));
  await screenshot(page, 'dashboard-compare', DOCS_IMAGES_DIR);
  assertClean(watched, 'comparison by env steps');
});

test('the x axis switch: policy version and wall time, kept in the URL; a reload shows the same axis and runs', async () => {
  const watched = await open(compareHash([A.runId, B.runId, C.runId], 'envSteps'), /^Compare runs$/);
  const { page } = watched;
  await assertEveryLine(page, RUNS, { 'held-out': EVALUATED.length });
  await page.getByRole('radio', { name: 'Policy version' }).check();
  assert.equal(hashOf(page), `#/compare?runs=${A.runId},${B.runId},${C.runId}&x=policyVersion`);
  await waitFor(async () => (await page.locator('[data-chart="reward"]').getAttribute('data-points')) === String(BATCHES), 'versions 0–5 as the one x array', 10_000);
  assert.match(await page.locator('[data-chart="reward"] .u-legend').innerText(), /Policy version/);
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Compare runs' }).waitFor();
  assert.equal(await page.getByRole('radio', { name: 'Policy version' }).isChecked(), true, 'the axis is restored');
  await assertEveryLine(page, RUNS, { 'held-out': EVALUATED.length });
  assert.equal(await page.locator('[data-chart="entropy"]').getAttribute('data-points'), String(BATCHES), 'learner steps by their policy version');
  assert.deepEqual(
    await page.locator('.compare-legend li').evaluateAll((items) => items.map((item) => item.getAttribute('data-run-id'))),
    RUNS.map((run) => run.runId),
    'the runs are restored in their order',
  );
  await page.getByRole('radio', { name: 'Wall time since start' }).check();
  assert.match(hashOf(page), /&x=wallTime$/);
  // Seconds since each run's first event: A and B share their batch times, C's come every 25 s.
  const seconds = RUNS.map((run) => Array.from({ length: BATCHES }, (_, i) => (batchTime(run, i) - run.startMs - 1000) / 1000));
  await waitFor(async () => (await page.locator('[data-chart="reward"]').getAttribute('data-points')) === String(unionOf(seconds)), 'the runs aligned on their start', 10_000);
  await assertEveryLine(page, RUNS, { 'held-out': EVALUATED.length });
  assertClean(watched, 'axis switch');
});

test('a run that does not exist and one with no data say so in the legend; the other run is still drawn; Remove takes a run out', async () => {
  const watched = await open(compareHash([A.runId, MISSING, EMPTY], 'envSteps'), /^Compare runs$/);
  const { page } = watched;
  const item = (runId: string) => page.locator(`.compare-legend li[data-run-id="${runId}"]`);
  await item(A.runId).waitFor({ timeout: 10_000 });
  assert.equal(await item(MISSING).getAttribute('data-state'), 'missing');
  assert.match(await item(MISSING).innerText(), /No such run/);
  assert.equal(await item(EMPTY).getAttribute('data-state'), 'empty');
  assert.match(await item(EMPTY).innerText(), /no rollout batches, learner steps or evaluations yet/);
  assert.deepEqual(await runPoints(page, 'reward'), { [A.runId]: BATCHES, [MISSING]: 0, [EMPTY]: 0 });
  await item(MISSING)
    .getByRole('button', { name: /Remove/ })
    .click();
  await waitFor(async () => hashOf(page) === `#/compare?runs=${A.runId},${EMPTY}&x=envSteps`, 'the URL without the removed run', 10_000);
  await waitFor(async () => (await page.locator('.compare-legend li').count()) === 2, 'two runs left', 10_000);
  assertClean(watched, 'missing and empty runs');
});

test('fewer than 2 or more than 8 runs, and names that are no run id: a message, no charts', async () => {
  const one = await open(compareHash([A.runId], 'envSteps'), /^Compare runs$/);
  await one.page.getByText(/Pick at least 2 runs to compare; this link names one/).waitFor({ timeout: 10_000 });
  assert.equal(await one.page.locator('[data-chart]').count(), 0);
  const nine = await open(compareHash([...RUNS.map((run) => run.runId), ...Array.from({ length: 6 }, (_, i) => `other-run-${i}`)], 'envSteps'), /^Compare runs$/);
  await nine.page.getByText(/At most 8 runs can be compared at once; this link names 9/).waitFor({ timeout: 10_000 });
  assert.equal(await nine.page.locator('[data-chart]').count(), 0);
  const bad = await open(`#/compare?runs=${A.runId},bad%20name,${B.runId}&x=sideways`, /^Compare runs$/);
  await bad.page.getByText(/Not a run id, left out: 'bad name'/).waitFor({ timeout: 10_000 });
  assert.equal(hashOf(bad.page), `#/compare?runs=${A.runId},${B.runId}&x=envSteps`, 'the URL as the page read it');
  await assertEveryLine(bad.page, [A, B], { 'held-out': EVALUATED.length });
  for (const watched of [one, nine, bad]) assertClean(watched, 'refused selections');
});
