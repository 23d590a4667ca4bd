// Integration (real Kafka, the real processors): two agents in one episode through the gateway, and rewards
// addressed to single calls. Two episodes of one task, each played by a planner and a coder calling in turn; one
// finish per episode with the episode's reward and, for the first, a reward on one call of each agent. Each
// agent's calls are their own trajectory (`<episode>/<agent>`) in their own group (`<task>/<agent>`), so the
// processors close a group of two trajectories per agent and compare each agent with itself; each call reward is
// on its own step of the trajectory and sample, and the per-step advantages (REINFORCE++, γ = 0.5) credit it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { topicName } from '../../core/config.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { startEpisodeLog } from '../../gateway/episode-log.js';
import { EpisodeBook } from '../../gateway/episodes.js';
import { OpenAIUpstream } from '../../gateway/openai-upstream.js';
import { startGateway } from '../../gateway/server.js';
import { startProcessors, type ProcessorsHandle } from '../../processors/pipeline/processor.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';
import { scopedBackbone } from '../helpers/scoped-backbone.js';
import { startVllmFixture } from './fixtures/vllm-fixture.js';

const closers: Array<() => Promise<unknown> | undefined> = [];
// Registered before the scope's own: the gateway and the processors stop before the topics are deleted.
after(async () => {
  for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
});
const scope = scopedBackbone('gateway-agents');

/** The real processors, REINFORCE++ with γ = 0.5 (per-step returns, so a step's own reward shows in its advantage). */
async function processors(): Promise<ProcessorsHandle> {
  const handle = await startProcessors(scope.backbone, {
    consumerGroupId: uniqueName('gateway-agents-processors'),
    processing: { reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'reinforce_plus_plus', options: { gamma: 0.5, weighting: 'unit' } }, filters: [] },
    groupSize: 8,
    flushIntervalMs: 50,
  });
  closers.push(() => handle.close());
  return handle;
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, 200, JSON.stringify(json));
  return json;
}

/** One episode: planner, coder, planner, coder; returns the answer ids by agent. */
async function play(base: string, runId: string, episode: string): Promise<Record<string, string[]>> {
  const ids: Record<string, string[]> = { planner: [], coder: [] };
  for (const agent of ['planner', 'coder', 'planner', 'coder']) {
    const headers = { 'x-trajflow-run': runId, 'x-trajflow-group': 'task', 'x-trajflow-episode': episode, 'x-trajflow-group-size': '2', 'x-trajflow-agent': agent };
    const messages = [{ role: 'user', content: `${agent}: turn ${ids[agent]!.length} of ${episode}` }];
    const answer = await post(`${base}/v1/chat/completions`, { model: 'fixture-model', messages, max_tokens: 4 }, headers);
    ids[agent]!.push(answer.id as string);
  }
  return ids;
}

test('two agents in one episode: a trajectory and a group per agent, and each call reward on its own step and advantage', { timeout: 240_000 }, async () => {
  const { backbone, config } = scope;
  const upstreamUrl = await startVllmFixture(closers);
  await processors();
  const runId = `gw-agents-${Date.now().toString(36)}`;
  const gatewayConfig = loadGatewayConfig({ port: 0, upstream: upstreamUrl, models: ['fixture-model'], runId, envName: 'ChatAgents' }, {});
  const book = new EpisodeBook({ timeoutMs: gatewayConfig.episodeTimeoutMs });
  const log = await startEpisodeLog(backbone.kafka, backbone.codec, book, { topic: topicName(config, 'env.steps'), lookbackMs: 60_000, catchUpTimeoutMs: 10_000 });
  const upstream = new OpenAIUpstream({ baseUrl: upstreamUrl, models: gatewayConfig.models, timeoutMs: 10_000, policyVersion: 0 });
  const gateway = await startGateway({ config: gatewayConfig, upstream, steps: backbone.steps, book, sync: log, log: () => undefined });
  closers.push(() => gateway.close().then(() => log.close()));

  const first = await play(gateway.url, runId, 'e0');
  await play(gateway.url, runId, 'e1');
  const rewards = { [first.planner![1]!]: 0.5, [first.coder![0]!]: -0.25 };
  const finished = await post(`${gateway.url}/v1/episodes/e0/finish`, { reward: 1, success: true, call_rewards: rewards }, { 'x-trajflow-run': runId });
  assert.deepEqual(
    (finished.trajectories as Array<Record<string, unknown>>).map((t) => [t.episode_id, t.group_id, t.agent, t.steps, t.reward]),
    [
      ['e0/planner', 'task/planner', 'planner', 3, 1.5],
      ['e0/coder', 'task/coder', 'coder', 3, 0.75],
    ],
  );
  await post(`${gateway.url}/v1/episodes/e1/finish`, { reward: 1, success: true }, { 'x-trajflow-run': runId });

  const ofRun = <T extends { runId: string }>(events: T[]) => events.filter((e) => e.runId === runId);
  await waitFor(async () => ofRun(await readEvents(backbone, config, 'samples', 'sample')).length >= 4, 'a sample of every agent trajectory', 180_000, 500);
  const trajectories = ofRun(await readEvents(backbone, config, 'trajectories', 'trajectory'));
  const samples = ofRun(await readEvents(backbone, config, 'samples', 'sample'));
  const trajectory = (id: string) => trajectories.find((t) => t.episodeId === id)!;
  const sample = (id: string) => samples.find((s) => s.episodeId === id)!;
  assert.deepEqual(trajectories.map((t) => `${t.groupId} ${t.episodeId} ${t.outcome}`).sort(), [
    'task/coder e0/coder terminated',
    'task/coder e1/coder terminated',
    'task/planner e0/planner terminated',
    'task/planner e1/planner terminated',
  ]);
  // Each call reward is on the step of its call; the outcome step keeps the episode's reward.
  assert.deepEqual(
    trajectory('e0/planner').steps.map((s) => s.reward),
    [0, 0.5, 1],
  );
  assert.deepEqual(
    trajectory('e0/coder').steps.map((s) => s.reward),
    [-0.25, 0, 1],
  );
  assert.deepEqual(
    trajectory('e1/planner').steps.map((s) => s.reward),
    [0, 0, 1],
  );
  assert.deepEqual(
    trajectory('e0/planner').steps.map((s) => s.stepIndex),
    [0, 1, 2],
    'turn indices per agent trajectory',
  );
  // Group statistics per agent: the planner's group is its two trajectories, 1.5 and 1; the coder's 0.75 and 1.
  assert.deepEqual([sample('e0/planner').groupSize, sample('e0/planner').groupRewardMean], [2, 1.25]);
  assert.deepEqual([sample('e0/coder').groupSize, sample('e0/coder').groupRewardMean], [2, 0.875]);
  assert.deepEqual([sample('e0/planner').reward, sample('e0/coder').reward], [1.5, 0.75]);
  // γ = 0.5 returns: planner e0 0.5, 1, 1 against e1 0.25, 0.5, 1 — the rewarded turn 1 is credited above its twin;
  // coder e0 −0.125, 0.5, 1 against 0.25, 0.5, 1 — its penalised turn 0 below.
  const adv = (id: string) => sample(id).stepAdvantages!;
  assert.ok(adv('e0/planner')[1]! > adv('e1/planner')[1]!, `planner turn 1: ${adv('e0/planner')} vs ${adv('e1/planner')}`);
  assert.ok(adv('e0/coder')[0]! < adv('e1/coder')[0]!, `coder turn 0: ${adv('e0/coder')} vs ${adv('e1/coder')}`);
  assert.ok(Math.abs(adv('e0/coder')[1]! - adv('e1/coder')[1]!) < 1e-9, 'the coder turn without a reward of its own is credited alike');
  // The sample's tokens carry the step's advantage: the planner's second turn's action tokens hold adv[1].
  const planner = sample('e0/planner');
  const actionAdvantages = planner.advantages.filter((_, i) => planner.lossMask[i] === 1);
  assert.ok(actionAdvantages.includes(adv('e0/planner')[1]!));
});
