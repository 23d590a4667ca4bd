// End to end (real ClickHouse, real Kafka, real Chromium): the web dashboard over a short synthetic run in
// a database of its own (migrations applied, rows inserted through the sink's row mappers, dropped
// afterwards). Each page must load without a console error; then the learning curves hold the run's
// batches, the held-out chart holds its evaluations by policy version beside the random policy's line,
// the collapse panel marks the gradient-norm spike and shows the alert, the trajectory inspector
// styles loss-masked tokens apart from environment tokens (decoded by trajflow's tokenizer), the pipeline
// page shows lag and dead letters, and a rollout batch (and an evaluation) inserted while the page is open
// appears in its chart through the event stream. Screenshots go to test-artifacts/. Waits poll, never sleep.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Admin } from 'kafkajs';
import type { Browser } from 'playwright-core';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { eventRows, jsonEachRowBody, type Row, type TableName } from '../../storage/sink/rows.js';
import type { EventName, EventTypes, StepEvent, TrajectoryEvent } from '../../schemas/index.js';
import { buildSample } from '../../processors/samples/build-sample.js';
import { connectBackbone, createKafka, type Backbone } from '../../streams/index.js';
import { loadApiConfig } from '../../api/config.js';
import { startHttpServer, type HttpServerHandle } from '../../api/server.js';
import { createApiServices, type ApiServices } from '../../api/services.js';
import { SpecialToken, trajflowTokenizer } from '../../tokenizer/index.js';
import { turnPromptIds } from '../../learner/policy/context.js';
import { sampleEvents } from '../../bench/load/events.js';
import { gatewayEnd } from '../helpers/gateway-ends.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { launchChromium, openWatchedPage, screenshot, type WatchedPage } from '../helpers/browser.js';

const base = loadConfig();
const hex = randomBytes(3).toString('hex');
const database = `test_web_${Date.now().toString(36)}_${hex}`;
const config: TrajflowConfig = { ...base, topicPrefix: uniqueName('web'), clickhouse: { ...base.clickhouse, database } };
const RUN = `web-run-${hex}`;
const GROUP = `${RUN}/g0`;
const EPISODE = `${GROUP}/e0`;
/** The run began ten minutes ago; a batch every 20 s, a learner step 10 s after each. */
const T0 = Math.floor((Date.now() - 600_000) / 1000) * 1000;
const BATCHES = 6;
const GRAD_NORMS = [1.0, 1.1, 0.9, 1.05, 6.5, 1.2];
const SPIKE_STEP = 4;
/** Greedy success of policy versions 0, 2, 4 on held-out tasks; the random policy solves 15 % of them. */
const HELD_OUT = [0.05, 0.3, 0.55];
const RANDOM_SUCCESS = 0.15;

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
    for (const { table, row } of eventRows(event, value, { topic: 'test', partition: 0, offset: String(offset++) }, { includeSampleTokens: true })) {
      byTable.set(table, [...(byTable.get(table) ?? []), row]);
    }
  }
  // The sink's own body encoding: dead letters carry raw bytes, which JSON.stringify cannot write.
  for (const [table, rows] of byTable) {
    const query = new URLSearchParams({ database, query: `INSERT INTO ${table} FORMAT JSONEachRow` });
    const body = jsonEachRowBody(rows);
    const response = await fetch(`${config.clickhouse.url}/?${query}`, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body) });
    assert.equal(response.status, 200, `INSERT INTO ${table}: ${await response.text()}`);
  }
}

function evaluation(policyVersion: number, greedySuccess: number, eventTimeMs: number): EventTypes['evaluation'] {
  return { ...sampleEvents.evaluation, runId: RUN, policyVersion, trainedIteration: policyVersion - 1, greedySuccess, randomSuccess: RANDOM_SUCCESS, tasks: 100, eventTimeMs };
}

function batch(i: number, eventTimeMs: number): EventTypes['rollout_stats'] {
  const rate = Math.min(1, 0.1 + 0.15 * i);
  return {
    ...sampleEvents.rollout_stats,
    runId: RUN,
    batchId: `batch-${i}`,
    groups: 4,
    trajectories: 16,
    rewardMean: rate,
    rewardStd: 0.3,
    meanInGroupRewardStd: Math.max(0.02, 0.45 - 0.08 * i),
    successRate: rate,
    passAtK: { '1': rate, '4': Math.min(1, rate + 0.3) },
    passHatK: { '1': rate, '4': rate ** 4 },
    meanLength: 3 + (i % 3),
    droppedGroups: 0,
    droppedByReason: {},
    eventTimeMs,
    // Every other batch has a group closed by the timeout, the last one also a group closed idle.
    closedBy: { full: 3, ...(i % 2 === 1 ? { timeout: 1 } : {}), ...(i === BATCHES - 1 ? { idle: 1 } : {}) },
  };
}

/** One FrozenLake-like episode tokenized the way trajflow's policy does it: [BOS?] OBS observation ACT, then the reply. */
function episodeSteps(): StepEvent[] {
  const tokenizer = trajflowTokenizer();
  const moves = ['Left', 'Down', 'Right'];
  return moves.map((move, i) => {
    const observation = `Turn ${i + 1}. Frozen lake:\nS F F F\nF H F H\nReach G without falling into a hole.`;
    const actionTokenIds = [tokenizer.singleTokenId(move)!, SpecialToken.EOS];
    return {
      ...sampleEvents.step,
      eventId: `${EPISODE}/s${i}`,
      runId: RUN,
      groupId: GROUP,
      episodeId: EPISODE,
      stepIndex: i,
      observation,
      observationTokenIds: turnPromptIds(tokenizer, observation, i === 0),
      action: `<answer>${move}</answer>`,
      actionTokenIds,
      actionLogProbs: actionTokenIds.map(() => Math.fround(-0.25)),
      policyVersion: 2,
      reward: i === 2 ? 1 : 0,
      terminated: i === 2,
      truncated: false,
      actionValid: true,
      stateKey: `pos=${i}`,
      eventTimeMs: T0 + 5000 + 100 * i,
    };
  });
}

function trajectoryOf(steps: readonly StepEvent[]): TrajectoryEvent {
  const first = steps[0]!;
  const last = steps.at(-1)!;
  return {
    runId: RUN,
    envName: first.envName,
    envVersion: first.envVersion,
    groupId: GROUP,
    episodeId: EPISODE,
    outcome: 'terminated',
    stepCount: steps.length,
    totalReward: 1,
    success: true,
    invalidActions: 0,
    gapCount: 0,
    minPolicyVersion: 2,
    maxPolicyVersion: 2,
    firstEventTimeMs: first.eventTimeMs,
    lastEventTimeMs: last.eventTimeMs,
    steps: steps.map(({ stepIndex, observation, observationTokenIds, action, actionTokenIds, actionLogProbs, policyVersion, reward, actionValid, stateKey, eventTimeMs }) => ({
      stepIndex,
      observation,
      observationTokenIds,
      action,
      actionTokenIds,
      actionLogProbs,
      policyVersion,
      reward,
      actionValid,
      stateKey,
      eventTimeMs,
    })),
    metrics: {},
  };
}

before(async () => {
  browser = await launchChromium();
  await applyMigrations(config);
  const steps = episodeSteps();
  const trajectory = trajectoryOf(steps);
  await insert('step', steps);
  await insert('trajectory', [trajectory]);
  await insert('sample', [buildSample(trajectory, { level: 'trajectory', advantage: 0.75 }, { estimator: 'grpo', group: { size: 4, rewardMean: 0.25, rewardStd: 0.43 } })]);
  await insert(
    'rollout_stats',
    Array.from({ length: BATCHES }, (_, i) => batch(i, T0 + 20_000 * (i + 1))),
  );
  await insert(
    'learner_step',
    GRAD_NORMS.map((gradNormPreClip, i) => ({
      ...sampleEvents.learner_step,
      runId: RUN,
      step: i,
      policyVersion: i,
      entropy: 1.3 - 0.15 * i,
      gradNormPreClip,
      // Cross-scoring on every other step (the learner's template.* metrics), Î/log N falling.
      // Staleness within the bound, and 3 samples dropped as stale at update 2.
      stalenessMax: i % 2,
      metrics: {
        droppedStale: i === 2 ? 3 : 0,
        importanceWeightMean: 1 + 0.01 * i,
        importanceWeightMax: 1.5 + 0.1 * i,
        ...(i % 2 === 0
          ? { 'template.mi': Math.log(8) * (0.8 - 0.2 * i), 'template.miUpperBound': Math.log(8), 'template.retrievalAccuracy': 0.9 - 0.2 * i, 'template.chance': 0.125 }
          : {}),
      },
      eventTimeMs: T0 + 20_000 * (i + 1) + 10_000,
    })),
  );
  await insert('collapse_alert', [
    {
      ...sampleEvents.collapse_alert,
      runId: RUN,
      alertId: `${RUN}-grad-spike`,
      kind: 'grad_norm_spike',
      severity: 'warning',
      learnerStep: SPIKE_STEP,
      policyVersion: SPIKE_STEP,
      value: 6.5,
      threshold: 3.3,
      message: 'Gradient norm 6.5 is 6× the median of the last steps.',
      evidence: { median: 1.05 },
      eventTimeMs: T0 + 20_000 * (SPIKE_STEP + 1) + 11_000,
    },
  ]);
  await insert(
    'evaluation',
    HELD_OUT.map((greedy, i) => evaluation(2 * i, greedy, T0 + 20_000 * (2 * i + 1) + 15_000)),
  );
  await insert('dead_letter', [{ ...sampleEvents.dead_letter, reason: 'invalid-value', detail: `step ${hex}: reward is not a number`, eventTimeMs: Date.now() - 60_000 }]);

  admin = createKafka(config, { clientId: 'test-dashboard-web-admin', quiet: true }).admin();
  await admin.connect();
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'schemas' || s.name === 'env.steps'),
  );
  backbone = await connectBackbone(config, { clientId: 'test-dashboard-web' });
  // A sink group 3 records behind on partition 0 of env.steps, for the lag table.
  const topic = topicName(config, 'env.steps');
  const producer = backbone.kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, partition: 0 })) });
  await producer.disconnect();
  await admin.setOffsets({ groupId: `${config.topicPrefix}.sink`, topic, partitions: [{ partition: 0, offset: '2' }] });

  services = createApiServices(backbone);
  server = await startHttpServer(loadApiConfig({ port: 0 }, {}), {
    ...services,
    events: { pollMs: 200, heartbeatMs: 1000 },
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
    await admin.deleteGroups([`${config.topicPrefix}.sink`]).catch(() => undefined);
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

const attr = async (watched: WatchedPage, selector: string, name: string): Promise<string | null> => watched.page.locator(selector).getAttribute(name, { timeout: 10_000 });

test('the page and its assets are served by the API app, with a content security policy', async () => {
  const page = await fetch(`${server.url}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  for (const asset of ['/static/app.js', '/vendor/uplot/uPlot.esm.js', '/vendor/uplot/uPlot.min.css']) assert.equal((await fetch(`${server.url}${asset}`)).status, 200, asset);
  const missing = await fetch(`${server.url}/static/nothing.js`);
  assert.equal(missing.status, 404);
  assert.match(missing.headers.get('content-type') ?? '', /problem\+json/);
});

test('runs list: the run is listed with its counts and links to its page', async () => {
  const watched = await open('#/', /^Runs$/);
  const link = watched.page.locator(`a[data-run-id="${RUN}"]`);
  await link.waitFor({ timeout: 10_000 });
  const row = watched.page.locator('tr', { has: link });
  assert.match(await row.innerText(), /FrozenLake[\s\S]*100\.0 %[\s\S]*\b6\b[\s\S]*\b6\b/);
  await screenshot(watched.page, 'dashboard-runs');
  await link.click();
  await watched.page.getByRole('heading', { level: 1, name: new RegExp(RUN) }).waitFor();
  assertClean(watched, 'runs list');
});

test('run page: learning curves hold every batch; held-out success by version beside the random policy; the collapse panel marks the spike and the alert', async () => {
  const watched = await open(`#/runs/${encodeURIComponent(RUN)}`, new RegExp(`Run ${RUN}`));
  const { page } = watched;
  await waitFor(async () => (await attr(watched, '[data-chart="reward"]', 'data-points')) === String(BATCHES), 'the reward chart to hold the batches', 10_000);
  for (const id of ['success', 'pass', 'closed', 'in-group-std', 'length']) assert.equal(await attr(watched, `[data-chart="${id}"]`, 'data-points'), String(BATCHES), id);
  for (const id of ['entropy', 'grad-norm', 'importance', 'staleness']) assert.equal(await attr(watched, `[data-chart="${id}"]`, 'data-points'), String(GRAD_NORMS.length), id);
  assert.equal(await attr(watched, '[data-chart="staleness"]', 'data-dropped-stale'), '3', 'the stale drops are counted on the staleness chart');
  const closedTimeout = Array.from({ length: BATCHES }, (_, i) => i % 2).reduce((a, b) => a + b, 0);
  assert.equal(await attr(watched, '[data-chart="closed"]', 'data-closed-timeout'), String(closedTimeout), 'groups closed by timeout are counted');
  assert.equal(await attr(watched, '[data-chart="closed"]', 'data-closed-idle'), '1', 'groups closed idle are counted');
  assert.match(await page.locator('[data-chart="closed"] .latest').innerText(), new RegExp(`${closedTimeout} closed by timeout, 1 by idle`));
  assert.equal(await attr(watched, '[data-chart="template"]', 'data-points'), String(Math.ceil(GRAD_NORMS.length / 2)), 'RAGEN-2 cross-scoring: only the steps that measured it');
  assert.match(await page.locator('[data-chart="template"] .u-legend').innerText(), /MI \/ log N[\s\S]*retrieval acc\.[\s\S]*chance/);
  assert.equal(await page.locator('[data-chart="reward"] canvas').count(), 1, 'uPlot drew on a canvas');
  assert.match(await page.locator('[data-chart="success"] .latest').innerText(), /latest: success rate 0\.850/);
  assert.match(await page.locator('[data-chart="pass"] .u-legend').innerText(), /pass@1[\s\S]*pass@4[\s\S]*pass\^1[\s\S]*pass\^4/);
  assert.equal(await attr(watched, '[data-chart="grad-norm"]', 'data-spikes'), '1', 'one gradient-norm spike');
  assert.equal(await attr(watched, '[data-chart="grad-norm"]', 'data-markers'), '1', 'the alert is drawn on the chart');
  const alert = page.locator(`tr[data-alert-id="${RUN}-grad-spike"]`);
  assert.match(await alert.innerText(), /warning[\s\S]*grad_norm_spike[\s\S]*Gradient norm 6\.5/);
  // The pass@k table loads on its own request, so wait for it rather than read it once.
  await page.locator('.pass-table th', { hasText: 'pass@k latest' }).waitFor({ timeout: 10_000 });
  assert.match(await page.locator('.pass-table').innerText(), /pass@k latest[\s\S]*pass\^k pooled/);
  // Held-out success by policy version, the random policy as a flat labelled line.
  assert.equal(await attr(watched, '[data-chart="held-out"]', 'data-points'), String(HELD_OUT.length));
  assert.equal(await attr(watched, '[data-chart="held-out"]', 'data-reference'), String(RANDOM_SUCCESS), 'the random policy line is drawn at its success');
  assert.match(await page.locator('[data-chart="held-out"] figcaption').innerText(), /held-out success/i);
  assert.match(await page.locator('[data-chart="held-out"] .u-legend').innerText(), /greedy success[\s\S]*random policy/);
  assert.match(await page.locator('[data-chart="held-out"] .latest').innerText(), /3 points; latest: greedy success 0\.550 · random policy 0\.150/);
  assert.match(await page.locator('[data-evaluations]').innerText(), /3 policy versions evaluated; v4: greedy 55\.0 % of 100 held-out tasks, random policy 15\.0 %/);
  await page.locator('a', { hasText: EPISODE }).waitFor();
  await screenshot(page, 'dashboard-run');
  assertClean(watched, 'run page');
});

test('a run fed by the gateway: how many of its episodes the agents finished and how many timed out (published as truncated)', async () => {
  const run = `${RUN}-gateway`;
  const end = (episode: number, reason: 'finish' | 'timeout') => gatewayEnd(run, episode, reason, Date.now() - 60_000 + episode);
  await insert('step', [end(0, 'finish'), end(1, 'finish'), end(2, 'timeout')]);
  const watched = await open(`#/runs/${encodeURIComponent(run)}`, /Run .*-gateway/);
  const line = watched.page.locator('.gateway-outcomes');
  await line.waitFor({ timeout: 10_000 });
  assert.equal(await line.getAttribute('data-finished'), '2');
  assert.equal(await line.getAttribute('data-timed-out'), '1');
  assert.match(await line.innerText(), /Through the gateway: 2 finished by the agent, 1 timed out/);
  assert.match(await watched.page.locator('.episode-outcomes').innerText(), /Episodes assembled: 0 terminated, 0 truncated, 0 incomplete/);
  assertClean(watched, 'gateway run');
});

test('a run with no data yet: empty charts that say so, and no errors', async () => {
  const watched = await open(`#/runs/${encodeURIComponent(`${RUN}-empty`)}`, /Run .*-empty/);
  const { page } = watched;
  await page.locator('.live[data-live="on"]').waitFor({ timeout: 10_000 });
  assert.equal(await attr(watched, '[data-chart="reward"]', 'data-points'), '0');
  assert.equal(await page.locator('[data-chart="entropy"] .latest').innerText(), 'no data yet');
  await page.getByText('No collapse alerts for this run.').waitFor();
  await page.getByText('No held-out evaluation of this run yet.').waitFor();
  assert.equal(await attr(watched, '[data-chart="held-out"]', 'data-points'), '0');
  assert.equal(await page.locator('[data-chart="held-out"] .latest').innerText(), 'no data yet');
  await page.getByText('No assembled trajectories yet.').waitFor();
  assertClean(watched, 'empty run');
});

test('trajectory inspector: turns with text, reward and advantage; loss tokens styled apart from environment tokens', async () => {
  const watched = await open(`#/runs/${encodeURIComponent(RUN)}/trajectories/${encodeURIComponent(EPISODE)}`, /^Trajectory/);
  const { page } = watched;
  await page.locator('.tokens').waitFor({ timeout: 10_000 });
  const turns = page.locator('li.turn');
  assert.equal(await turns.count(), 3);
  const last = await turns.nth(2).innerText();
  assert.match(last, /Reward\s*1\b/);
  assert.match(last, /Advantage\s*0\.750/);
  assert.match(last, /<answer>Right<\/answer>/);
  const lossTokens = page.locator('.tokens .tok-loss');
  const envTokens = page.locator('.tokens .tok-env');
  assert.equal(await lossTokens.count(), 6, 'two generated tokens per turn');
  assert.ok((await envTokens.count()) > 20, 'observation tokens');
  assert.deepEqual(await lossTokens.allInnerTexts(), ['Left', '<eos>', 'Down', '<eos>', 'Right', '<eos>'], 'decoded by trajflow’s tokenizer');
  const [lossStyle, envStyle] = await Promise.all([lossTokens.first(), envTokens.first()].map((t) => t.evaluate((el) => getComputedStyle(el).backgroundColor)));
  assert.notEqual(lossStyle, envStyle, 'the two kinds look different');
  assert.match((await envTokens.first().getAttribute('title')) ?? '', /environment, masked out/);
  assert.equal(await page.locator('.turn-mark').count(), 3, 'each turn is located in the tokens');
  await screenshot(page, 'dashboard-trajectory');
  assertClean(watched, 'trajectory inspector');
});

test('pipeline page: lag and throughput per consumer group, dead letters with their reasons', async () => {
  const watched = await open('#/ops', /^Pipeline$/);
  const { page } = watched;
  const sink = page.locator('table.lag tr', { hasText: `${config.topicPrefix}.sink` });
  await sink.waitFor({ timeout: 15_000 });
  assert.match(await sink.innerText(), /\t3\t/, 'the sink group lags by 3 records');
  const letter = page.locator('table.dead-letters tr', { hasText: hex });
  await letter.waitFor({ timeout: 10_000 });
  assert.match(await letter.innerText(), /invalid-value/);
  // The group commits 3 more records: the next refresh measures its throughput.
  assert.equal(await sink.locator('.rate').innerText(), 'measuring…');
  await admin.setOffsets({ groupId: `${config.topicPrefix}.sink`, topic: topicName(config, 'env.steps'), partitions: [{ partition: 0, offset: '5' }] });
  await waitFor(async () => Number(await sink.locator('.rate').innerText()) > 0, 'a throughput above 0 for the sink group', 15_000, 200);
  assert.match(await sink.innerText(), /\t0\t[\d.]+\t/, 'and no lag left');
  await screenshot(page, 'dashboard-pipeline');
  assertClean(watched, 'pipeline page');
});

test('live: a rollout batch, a learner step and an evaluation stored while the page is open are added to the charts', async () => {
  const watched = await open(`#/runs/${encodeURIComponent(RUN)}`, new RegExp(`Run ${RUN}`));
  const { page } = watched;
  await waitFor(async () => (await attr(watched, '[data-chart="reward"]', 'data-points')) === String(BATCHES), 'the loaded batches', 10_000);
  await page.locator('.live[data-live="on"]').waitFor({ timeout: 10_000 });
  const now = Date.now();
  await insert('rollout_stats', [batch(BATCHES, now)]);
  await insert('learner_step', [
    { ...sampleEvents.learner_step, runId: RUN, step: GRAD_NORMS.length, policyVersion: GRAD_NORMS.length, gradNormPreClip: 1, entropy: 0.4, eventTimeMs: now },
  ]);
  await insert('evaluation', [evaluation(GRAD_NORMS.length, 0.7, now)]);
  await waitFor(async () => (await attr(watched, '[data-chart="reward"]', 'data-points')) === String(BATCHES + 1), 'the live batch in the reward chart', 10_000);
  await waitFor(async () => (await attr(watched, '[data-chart="entropy"]', 'data-points')) === String(GRAD_NORMS.length + 1), 'the live learner step', 10_000);
  await waitFor(async () => (await attr(watched, '[data-chart="held-out"]', 'data-points')) === String(HELD_OUT.length + 1), 'the live evaluation in the held-out chart', 10_000);
  assert.match(await page.locator('[data-evaluations]').innerText(), new RegExp(`v${GRAD_NORMS.length}: greedy 70\\.0 %`));
  assert.equal(await attr(watched, '[data-chart="success"]', 'data-points'), String(BATCHES + 1));
  await screenshot(page, 'dashboard-run-live');
  assertClean(watched, 'live updates');
});
