// Integration (real Kafka, the real processors): the gateway's state comes from the log, not its memory.
// 1. The gateway as its own process (`trajflow gateway` in front of the vLLM-shaped fixture), 32 episodes in
//    flight from agents that retry on connection errors, SIGKILLed twice and started again: every answered call
//    is recorded exactly once, every episode's turn indices are 0..n-1 with no duplicate or hole, every turn
//    nobody saw answered is named an orphan and left out of the sample, and every episode is one trajectory
//    and one sample holding exactly the conversation its agent had.
// 2. Two instances with no sticky routing: each episode's calls alternate between them, and the finish goes to
//    either; the same holds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { topicName } from '../../core/config.js';
import { freePort } from '../../infra/free-port.js';
import { startProcessors, type ProcessorsHandle } from '../../processors/pipeline/processor.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { startEpisodeLog } from '../../gateway/episode-log.js';
import { EpisodeBook } from '../../gateway/episodes.js';
import { OpenAIUpstream } from '../../gateway/openai-upstream.js';
import { startGateway } from '../../gateway/server.js';
import { createFaultRun, type FaultRun, type Part } from '../faults/harness.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { testProcessing } from '../processors/helpers/processing.js';
import { playEpisode, type AgentPlan } from './fault-agents.js';
import { checkRun } from './fault-check.js';
import { startVllmFixture } from './fixtures/vllm-fixture.js';

const GROUP_SIZE = 4;
const closers: Array<() => Promise<unknown> | undefined> = [];
let run: FaultRun;
let processors: ProcessorsHandle;
let upstreamUrl: string;

before(async () => {
  run = await createFaultRun('gateway');
  upstreamUrl = await startVllmFixture(closers);
  processors = await startProcessors(run.backbone, { consumerGroupId: uniqueName('gateway-processors'), processing: testProcessing, groupSize: GROUP_SIZE, flushIntervalMs: 50 });
});

after(async () => {
  for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
  await processors.close().catch(() => undefined);
  await run.cleanup();
});

/** 32 agents (8 groups of 4), each `turns` calls and a finish, all in flight at once. */
function playAll(plan: AgentPlan, prefix: string, episodes: number) {
  return Promise.all(
    Array.from({ length: episodes }, (_, i) => {
      const group = `${prefix}-g${Math.floor(i / GROUP_SIZE)}`;
      return playEpisode(plan, group, `${group}-e${i % GROUP_SIZE}`, i % 3 === 0 ? 1 : 0);
    }),
  );
}

async function startGatewayProcess(port: number, runId: string): Promise<Part> {
  const part = run.part('gateway', ['--upstream', upstreamUrl, '--model-name', 'fixture-model', '--port', String(port), '--run-id', runId, '--env', 'ChatAgent']);
  await part.waitLine(/OpenAI base URL/, 'the gateway listening', 120_000);
  return part;
}

test('the gateway SIGKILLed twice with 32 episodes in flight: every answered call once, turn indices whole, one trajectory and one sample each', { timeout: 540_000 }, async () => {
  const port = await freePort();
  const runId = `gw-kill-${Date.now().toString(36)}`;
  let gateway = await startGatewayProcess(port, runId);
  let answered = 0;
  let failed = false;
  const plan: AgentPlan = { runId, turns: 8, groupSize: GROUP_SIZE, urlFor: () => `http://127.0.0.1:${port}`, onAnswer: () => answered++, stop: () => failed };
  const t0 = Date.now();
  const agents = playAll(plan, `${runId}-k`, 32).catch((error: unknown) => {
    failed = true;
    throw error;
  });
  const kills: string[] = [];
  for (const at of [60, 150]) {
    await waitFor(() => answered >= at || failed, `${at} answered calls`, 120_000, 5);
    await gateway.kill('SIGKILL');
    kills.push(`killed after ${answered} answered calls`);
    const restart = Date.now();
    gateway = await startGatewayProcess(port, runId);
    const rebuilt = gateway
      .currentLines()
      .map((l) => /(\d+) open episodes from the log/.exec(l)?.[1])
      .find((n) => n !== undefined);
    kills.push(`restarted in ${Date.now() - restart} ms with ${rebuilt} open episodes from the log`);
  }
  const records = await agents;
  const playedMs = Date.now() - t0;
  const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as Record<string, number>;
  const figures = await checkRun(run.backbone, run.config, runId, records);
  console.log(
    `gateway SIGKILL ×2: ${kills.join('; ')}; ${figures.answered} answered calls in ${playedMs} ms, ${figures.steps} steps, ${figures.orphans} orphans, ${figures.retries} client retries, ${figures.trajectories} trajectories, ${figures.samples} samples; last life's /health: ${JSON.stringify({ answeredCalls: health.answeredCalls, orphanTurns: health.orphanTurns, clientsGone: health.clientsGone })}`,
  );
  assert.equal(figures.answered, 32 * 8);
  assert.equal(figures.steps, figures.answered + figures.orphans + 32, 'every step is an answered call, an orphan or an outcome');
});

test('two gateway instances with no sticky routing: the calls of each episode alternate between them; every turn once, one trajectory and one sample each', {
  timeout: 300_000,
}, async () => {
  const runId = `gw-two-${Date.now().toString(36)}`;
  const urls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const config = loadGatewayConfig({ port: 0, upstream: upstreamUrl, models: ['fixture-model'], runId, envName: 'ChatAgent' }, {});
    const book = new EpisodeBook({ timeoutMs: config.episodeTimeoutMs });
    const log = await startEpisodeLog(run.backbone.kafka, run.backbone.codec, book, { topic: topicName(run.config, 'env.steps'), lookbackMs: 60_000, catchUpTimeoutMs: 10_000 });
    const upstream = new OpenAIUpstream({ baseUrl: upstreamUrl, models: config.models, timeoutMs: 10_000, policyVersion: 0 });
    const gateway = await startGateway({ config, upstream, steps: run.backbone.steps, book, sync: log, log: () => undefined });
    closers.push(() => gateway.close().then(() => log.close()));
    urls.push(gateway.url);
  }
  let failed = false;
  const plan: AgentPlan = { runId, turns: 6, groupSize: GROUP_SIZE, urlFor: (call) => urls[call % 2]!, stop: () => failed };
  const records = await playAll(plan, `${runId}-t`, 16).catch((error: unknown) => {
    failed = true;
    throw error;
  });
  const figures = await checkRun(run.backbone, run.config, runId, records);
  console.log(
    `gateway two instances: ${figures.answered} answered calls, ${figures.steps} steps, ${figures.orphans} orphans, ${figures.trajectories} trajectories, ${figures.samples} samples`,
  );
  assert.equal(figures.orphans, 0);
  assert.equal(figures.steps, 16 * 6 + 16);
});
