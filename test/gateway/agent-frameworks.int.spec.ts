// Integration (real Kafka): the framework examples of examples/agents/ — the OpenAI Agents SDK (Responses API, a
// function tool), the Vercel AI SDK (Responses API), LangGraph.js with ChatOpenAI (chat completions) and Mastra (its
// OpenAI-compatible model config, chat completions) — play FrozenLake through a gateway in front of trajflow's own
// policy and post their rewards. Every answered call is exactly one step holding the token ids, log-probs and prompt
// ids the policy sampled (checked against the upstream's own record), one call per move, and every episode ends
// once, with its reward. Behind an upstream that turns the policy's answer into a tool call, as vLLM's tool parser
// turns what a model wrote, the Agents SDK example makes every move through its `move` tool.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { selectBackend } from '../../learner/backend.js';
import type { StepEvent } from '../../schemas/index.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../streams/index.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { ownPolicyUpstream } from '../../gateway/own-policy.js';
import { startGateway } from '../../gateway/server.js';
import type { Upstream, UpstreamAnswer, UpstreamRequest } from '../../gateway/upstream.js';
import type { EpisodesOptions, EpisodesSummary } from '../../examples/agents/episodes.js';
import { runLangGraphAgent } from '../../examples/agents/langgraph.js';
import { runMastraAgent } from '../../examples/agents/mastra.js';
import { runAgentsSdkAgent } from '../../examples/agents/openai-agents-sdk.js';
import { runVercelAiAgent } from '../../examples/agents/vercel-ai-sdk.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';

const base = loadConfig();
const SMALL_MODEL = { width: 32, layers: 1, heads: 2, contextLength: 128 };
const GROUP_SIZE = 3;
let backbone: Backbone;
let admin: Admin;
const prefixes: string[] = [];

before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(base, { clientId: 'test-gateway-agent-frameworks' });
  admin = backbone.kafka.admin();
  await admin.connect();
});

after(async () => {
  const ours = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(`${p}.`)));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
  await admin.disconnect();
  await backbone.close();
});

/** What the policy sampled for one call: the upstream's own record. */
interface Sampled {
  readonly promptIds: readonly number[];
  readonly ids: readonly number[];
  readonly logProbs: readonly number[];
}

const float32Bytes = (values: readonly number[]) => Buffer.from(Float32Array.from(values).buffer);

/**
 * A tool parser's view of the own policy's answer (as vLLM's turns the call a model wrote into `tool_calls`): the
 * sampled `<answer>` becomes a call of the request's first tool, its tokens and log-probs unchanged.
 */
function asToolCall(answer: UpstreamAnswer, request: UpstreamRequest, calls: { n: number }): UpstreamAnswer {
  const tool = (request.passthrough.tools as Array<{ function: { name: string } }> | undefined)?.[0];
  if (!tool) return answer;
  return {
    ...answer,
    choices: answer.choices.map((choice) => {
      const actions = /<answer>([\s\S]*?)<\/answer>/.exec(choice.text)?.[1]?.trim() ?? '';
      const call = { id: `call_${++calls.n}`, type: 'function', function: { name: tool.function.name, arguments: JSON.stringify({ actions }) } };
      return { ...choice, text: '', finishReason: 'tool_calls', toolCalls: [call] };
    }),
  };
}

/** A gateway in front of the own policy on a topic prefix of its own, its upstream's answers kept in `record`. */
async function recordingGateway(name: string, runId: string, toolCalls = false) {
  const config: TrajflowConfig = { ...base, topicPrefix: uniqueName(name) };
  prefixes.push(config.topicPrefix);
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'env.steps' || s.name === 'policy.versions'),
  );
  const own = await ownPolicyUpstream({ ...backbone, config }, { runId, envName: 'FrozenLake', model: 'trajflow-policy', temperature: 1, modelSettings: SMALL_MODEL });
  const record: Sampled[] = [];
  const calls = { n: 0 };
  const upstream: Upstream = {
    name: own.upstream.name,
    models: () => own.upstream.models(),
    complete: async (request) => {
      const sampled = await own.upstream.complete(request);
      const answer = toolCalls ? asToolCall(sampled, request, calls) : sampled;
      for (const choice of answer.choices) record.push({ promptIds: [...(answer.promptTokenIds ?? [])], ids: [...choice.tokenIds], logProbs: [...choice.logProbs] });
      return answer;
    },
  };
  const gateway = await startGateway({
    config: loadGatewayConfig({ port: 0, runId, envName: 'FrozenLake' }, {}),
    upstream,
    steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')),
    log: () => undefined,
  });
  return { config, gateway, record, close: async () => (await gateway.close(), await own.close()) };
}

/** Each episode's steps in order: one per move, each what the policy sampled for that call, then its one end with the reward. */
function assertEpisodes(steps: readonly StepEvent[], summary: EpisodesSummary, record: readonly Sampled[]): void {
  let call = 0;
  for (const episode of summary.episodes) {
    const own = steps.filter((s) => s.episodeId === episode.id).sort((a, b) => a.stepIndex - b.stepIndex);
    assert.deepEqual(
      own.map((s) => s.stepIndex),
      own.map((_, i) => i),
      `${episode.id}: step indices 0…n without gaps`,
    );
    const end = own.at(-1)!;
    assert.equal(own.filter((s) => s.terminated || s.truncated).length, 1, `${episode.id} ends once`);
    assert.deepEqual([end.terminated, end.reward, end.metrics.success, end.actionTokenIds.length], [episode.terminated, episode.reward, episode.success ? 1 : 0, 0]);
    const turns = own.slice(0, -1);
    assert.equal(turns.length, episode.moves, `${episode.id}: one call per move`);
    for (const [i, step] of turns.entries()) {
      const sampled = record[call++]!;
      assert.ok(sampled, `${episode.id} turn ${i}: a call the policy answered`);
      assert.deepEqual(step.actionTokenIds, sampled.ids, `${episode.id} turn ${i}: the sampled token ids`);
      assert.ok(float32Bytes(step.actionLogProbs).equals(float32Bytes(sampled.logProbs)), `${episode.id} turn ${i}: the sampled log-probs`);
      assert.deepEqual(step.observationTokenIds, sampled.promptIds, `${episode.id} turn ${i}: the prompt ids the policy read`);
      assert.ok(step.runId === end.runId && step.groupId === episode.groupId, `${episode.id} turn ${i}: run and group from the headers`);
    }
  }
  assert.equal(call, record.length, 'every call the policy answered is a step of an episode');
}

async function playsAndRecords(name: string, run: (options: EpisodesOptions) => Promise<EpisodesSummary>, toolCalls = false): Promise<StepEvent[]> {
  const runId = uniqueName(name).replace(/\./g, '-');
  const { config, gateway, record, close } = await recordingGateway(name, runId, toolCalls);
  try {
    // One action per move, as trajflow train's FrozenLake preset plays, so that episodes tend to last several calls.
    const summary = await run({ baseURL: `${gateway.url}/v1`, runId, groups: 1, groupSize: GROUP_SIZE, envOptions: { maxActionsPerTurn: 1 } });
    assert.equal(summary.episodes.length, GROUP_SIZE);
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { answeredCalls: number; recordedSteps: number; episodesFinished: number };
    assert.deepEqual([health.answeredCalls, health.episodesFinished], [record.length, GROUP_SIZE]);
    assert.equal(health.recordedSteps, health.answeredCalls + GROUP_SIZE, 'every answered call recorded, plus one end per episode');
    let steps: StepEvent[] = [];
    await waitFor(async () => (steps = await readEvents(backbone, config, 'env.steps', 'step')).length >= health.recordedSteps, 'every step on the topic', 30_000, 200);
    assert.equal(steps.length, health.recordedSteps);
    assert.ok(
      steps.every((s) => s.runId === runId),
      'the run from the headers',
    );
    assertEpisodes(steps, summary, record);
    console.log(`${name}: ${record.length} calls (moves per episode ${summary.episodes.map((e) => e.moves).join(', ')}), all recorded, every episode finished`);
    return steps;
  } finally {
    await close();
  }
}

test('the OpenAI Agents SDK (Responses API, a `move` function tool) plays through the gateway: every call one step as sampled, every episode finished', {
  timeout: 180_000,
}, async () => {
  await playsAndRecords('agents-sdk', runAgentsSdkAgent);
});

test('the OpenAI Agents SDK with a tool-calling upstream: every move is a call of its `move` tool, each call one step as sampled, every episode finished', {
  timeout: 180_000,
}, async () => {
  const steps = await playsAndRecords('agents-sdk-tools', runAgentsSdkAgent, true);
  const turns = steps.filter((s) => !s.terminated && !s.truncated);
  assert.ok(turns.length > 0);
  for (const step of turns) {
    assert.equal(step.info.finishReason, 'tool_calls', `${step.episodeId} turn ${step.stepIndex}: answered with a tool call`);
    const [call] = JSON.parse(String(step.info.toolCalls)) as Array<{ function: { name: string } }>;
    assert.equal(call?.function.name, 'move', `${step.episodeId} turn ${step.stepIndex}: the move tool`);
  }
});

test('the Vercel AI SDK (openai(model): the Responses API) plays through the gateway: every call one step as sampled, every episode finished', { timeout: 180_000 }, async () => {
  await playsAndRecords('vercel-ai-sdk', runVercelAiAgent);
});

test('LangGraph.js with ChatOpenAI (chat completions) plays through the gateway: every call one step as sampled, every episode finished', { timeout: 180_000 }, async () => {
  await playsAndRecords('langgraph', runLangGraphAgent);
});

test('Mastra (an Agent on its OpenAI-compatible model config: chat completions) plays through the gateway: every call one step as sampled, every episode finished', {
  timeout: 180_000,
}, async () => {
  await playsAndRecords('mastra', runMastraAgent);
});
