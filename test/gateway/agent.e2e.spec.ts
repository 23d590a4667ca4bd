// End to end (real Kafka): an agent written against the official `openai` client plays FrozenLake by chat
// through the gateway, whose upstream is trajflow's own policy, and posts each episode's reward with
// POST /v1/episodes/{id}/finish. The processors turn the recorded steps into trajectories and samples whose
// action token ids and behaviour log-probs are byte for byte what the policy sampled (checked against the
// upstream's own record, kept by a wrapper around it); the learner trains on the samples, publishes policy
// version 1, and the gateway then answers with version 1.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { createEnv } from '../../envs/registry.js';
import type { StepResult } from '../../envs/contract.js';
import { startProcessors } from '../../processors/pipeline/processor.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../streams/index.js';
import { selectBackend } from '../../learner/backend.js';
import { buildLearnerConfig } from '../../learner/loop/config.js';
import { startLearner } from '../../learner/loop/learner.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { ownPolicyUpstream } from '../../gateway/own-policy.js';
import { startGateway } from '../../gateway/server.js';
import type { Upstream } from '../../gateway/upstream.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';
import { testProcessing } from '../processors/helpers/processing.js';

const SMALL_MODEL = { width: 32, layers: 1, heads: 2, contextLength: 128 };
const GROUPS = 2;
const GROUP_SIZE = 4;
let backbone: Backbone;

before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-gateway-agent' });
});
after(async () => {
  await backbone.close();
});

/** What the policy sampled for one call: the upstream's own record. */
interface Sampled {
  readonly promptIds: readonly number[];
  readonly ids: readonly number[];
  readonly logProbs: readonly number[];
  readonly version: number;
}

const int32Bytes = (values: readonly number[]) => Buffer.from(Int32Array.from(values).buffer);
const float32Bytes = (values: readonly number[]) => Buffer.from(Float32Array.from(values).buffer);

test('openai client → gateway → own policy: FrozenLake by chat, rewards posted; trajectories and samples hold exactly what the policy sampled; the learner trains and the gateway serves the new version', {
  timeout: 480_000,
}, async () => {
  const config: TrajflowConfig = { ...loadConfig(), topicPrefix: uniqueName('gateway-e2e') };
  await ensureTopics(config);
  const scoped = { ...backbone, config, steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')) };
  const runId = uniqueName('agent-run');
  const learner = await startLearner(
    scoped,
    buildLearnerConfig(config, {
      runId,
      envName: 'FrozenLake',
      model: SMALL_MODEL,
      batchTokens: 800,
      minSamples: 4,
      maxWaitMs: 300,
      maxUpdates: 1,
      optimizer: { learningRate: 1e-3 },
    }),
    { log: () => {} },
  );
  const processors = await startProcessors(scoped, { consumerGroupId: uniqueName('processors'), processing: testProcessing, groupSize: GROUP_SIZE, flushIntervalMs: 50 });
  const own = await ownPolicyUpstream(scoped, { runId, envName: 'FrozenLake', model: 'trajflow-policy', temperature: 1, modelSettings: SMALL_MODEL });
  const record: Sampled[] = [];
  const recording: Upstream = {
    name: own.upstream.name,
    models: () => own.upstream.models(),
    complete: async (request) => {
      const answer = await own.upstream.complete(request);
      for (const choice of answer.choices)
        record.push({ promptIds: [...(answer.promptTokenIds ?? [])], ids: [...choice.tokenIds], logProbs: [...choice.logProbs], version: answer.policyVersion });
      return answer;
    },
  };
  const gateway = await startGateway({ config: loadGatewayConfig({ port: 0, runId, envName: 'FrozenLake' }, {}), upstream: recording, steps: scoped.steps, log: () => undefined });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'no-token-on-loopback', maxRetries: 0 });
  const calls = new Map<string, Sampled[]>();

  /** The agent: chat until the episode ends, then post the reward. */
  async function play(groupId: string, episodeId: string, seed: number, stream: boolean): Promise<void> {
    const env = createEnv('FrozenLake', { slippery: false });
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: env.systemPrompt() },
      { role: 'user', content: env.reset(seed).observation },
    ];
    const headers = { 'x-trajflow-group': groupId, 'x-trajflow-episode': episodeId, 'x-trajflow-group-size': String(GROUP_SIZE) };
    const from = record.length;
    let total = 0;
    let result: StepResult;
    for (;;) {
      let reply = '';
      if (stream) {
        const chunks = await client.chat.completions.create({ model: 'trajflow-policy', messages, logprobs: true, stream: true }, { headers });
        for await (const chunk of chunks) reply += chunk.choices[0]?.delta?.content ?? '';
      } else {
        const completion = await client.chat.completions.create({ model: 'trajflow-policy', messages, logprobs: true }, { headers });
        reply = completion.choices[0]!.message.content ?? '';
        assert.equal(completion.choices[0]!.logprobs!.content!.length, record.at(-1)!.ids.length);
      }
      messages.push({ role: 'assistant', content: reply });
      result = env.step(reply);
      total += result.reward;
      if (result.terminated || result.truncated) break;
      messages.push({ role: 'user', content: result.observation });
    }
    calls.set(episodeId, record.slice(from));
    const finished = await fetch(`${gateway.url}/v1/episodes/${encodeURIComponent(episodeId)}/finish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trajflow-run': runId },
      body: JSON.stringify({ reward: total, success: result.metrics.success === 1, terminated: result.terminated, truncated: !result.terminated }),
    });
    assert.equal(finished.status, 200, await finished.text());
  }

  try {
    for (let g = 0; g < GROUPS; g++) {
      for (let e = 0; e < GROUP_SIZE; e++) await play(`${runId}/g${g}`, `${runId}/g${g}/e${e}`, 100 + g, e % 2 === 1);
    }
    const ofRun = <T extends { runId: string }>(events: T[]) => events.filter((e) => e.runId === runId);
    await waitFor(async () => ofRun(await readEvents(backbone, config, 'samples', 'sample')).length >= GROUPS * GROUP_SIZE, 'the samples of every episode', 120_000, 250);
    const trajectories = ofRun(await readEvents(backbone, config, 'trajectories', 'trajectory'));
    const samples = ofRun(await readEvents(backbone, config, 'samples', 'sample'));
    assert.equal(trajectories.length, GROUPS * GROUP_SIZE);
    for (const trajectory of trajectories) {
      const sampled = calls.get(trajectory.episodeId)!;
      assert.equal(trajectory.outcome === 'incomplete', false, `${trajectory.episodeId} ended`);
      const turns = trajectory.steps.filter((s) => s.actionTokenIds.length > 0);
      assert.equal(turns.length, sampled.length, 'one step per call, plus the outcome step');
      assert.equal(trajectory.steps.length, sampled.length + 1);
      turns.forEach((step, i) => {
        assert.ok(int32Bytes(step.actionTokenIds).equals(int32Bytes(sampled[i]!.ids)), `${trajectory.episodeId} turn ${i}: token ids`);
        assert.ok(float32Bytes(step.actionLogProbs).equals(float32Bytes(sampled[i]!.logProbs)), `${trajectory.episodeId} turn ${i}: log-probs`);
        assert.deepEqual(step.observationTokenIds, sampled[i]!.promptIds);
      });
    }
    assert.equal(samples.length, GROUPS * GROUP_SIZE);
    for (const sample of samples) {
      const sampled = calls.get(sample.episodeId)!;
      const trained = sample.tokenIds.filter((_, i) => sample.lossMask[i] === 1);
      const behaviour = sample.behaviourLogProbs.filter((_, i) => sample.lossMask[i] === 1);
      assert.ok(int32Bytes(trained).equals(int32Bytes(sampled.flatMap((s) => s.ids))), `${sample.episodeId}: the trained tokens are the sampled ones`);
      assert.ok(float32Bytes(behaviour).equals(float32Bytes(sampled.flatMap((s) => s.logProbs))), `${sample.episodeId}: behaviour log-probs byte for byte`);
      assert.deepEqual(
        sample.tokenIds,
        sampled.flatMap((s) => [...s.promptIds, ...s.ids]),
        'the sequence the policy sampled in',
      );
    }
    const stats = await learner.done;
    assert.equal(stats.updates, 1);
    // The gateway follows the run's versions: a new call is answered (and recorded) with version 1.
    let version = 0;
    await waitFor(
      async () => {
        const answer = await client.chat.completions.create(
          { model: 'trajflow-policy', messages: [{ role: 'user', content: createEnv('FrozenLake').reset(1).observation }] },
          { headers: { 'x-trajflow-episode': `${runId}/probe-${Date.now()}` } },
        );
        version = Number(answer.system_fingerprint?.replace('trajflow-v', ''));
        return version === 1;
      },
      'the gateway answering with policy version 1',
      60_000,
      500,
    );
    assert.equal(record.at(-1)!.version, 1);
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { answeredCalls: number; recordedSteps: number; episodesFinished: number };
    assert.equal(health.episodesFinished, GROUPS * GROUP_SIZE);
    assert.equal(health.recordedSteps, health.answeredCalls + health.episodesFinished, 'every answered call recorded, plus one outcome step per finished episode');
    console.log(`gateway e2e: ${record.length} calls, ${trajectories.length} trajectories, ${samples.length} samples, learner updates ${stats.updates}, gateway at v${version}`);
  } finally {
    await gateway.close();
    await own.close();
    await processors.close();
    await learner.stop().catch(() => undefined);
  }
});
