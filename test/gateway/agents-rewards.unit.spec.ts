// Unit: several agents in one episode — each agent's calls its own trajectory (`<episode>/<agent>` in group
// `<group>/<agent>`), a finish ending them all — and rewards addressed to single calls by the answer's id,
// credited on the call's step through the outcome step's info.stepRewards; the book rebuilt from the log knows both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StepEvent } from '../../schemas/index.js';
import { validateIngestStep } from '../../schemas/index.js';
import { parseChatRequest } from '../../gateway/chat-request.js';
import { EpisodeBook } from '../../gateway/episodes.js';
import { parseFinishRequest } from '../../gateway/finish-request.js';
import { callIdentity } from '../../gateway/identity.js';
import type { OpenAIError } from '../../gateway/openai-error.js';
import { CallRecorder } from '../../gateway/recorder.js';
import { stepRewardsOf } from '../../gateway/step-rewards.js';
import type { Upstream } from '../../gateway/upstream.js';
import { trajectoryFromSteps } from '../../processors/assembly/open-episode.js';

const defaults = { runId: 'run-d', envName: 'Chat' };
const headers = (map: Record<string, string>) => (name: string) => map[name];
const param = (fn: () => unknown): string | null => {
  try {
    fn();
  } catch (error) {
    return (error as OpenAIError).param;
  }
  return 'no error';
};

test('identity: an agent (header or metadata) makes its own trajectory of the episode and of the group', () => {
  const planner = callIdentity(headers({ 'x-trajflow-episode': 'e1', 'x-trajflow-group': 'task', 'x-trajflow-agent': 'planner' }), {}, defaults, 'c');
  assert.deepEqual([planner.episodeId, planner.groupId, planner.agent], ['e1/planner', 'task/planner', { name: 'planner', episodeId: 'e1' }]);
  const coder = callIdentity(headers({}), { trajflow_episode: 'e1', trajflow_agent: 'coder' }, defaults, 'c');
  assert.deepEqual([coder.episodeId, coder.groupId], ['e1/coder', 'e1/coder']);
  assert.equal(callIdentity(headers({ 'x-trajflow-agent': 'solo' }), {}, defaults, 'chatcmpl-9').episodeId, 'chatcmpl-9/solo');
  assert.equal(
    param(() => callIdentity(headers({ 'x-trajflow-agent': 'a/b' }), {}, defaults, 'c')),
    'x-trajflow-agent',
  );
  assert.equal(
    param(() => callIdentity(headers({ 'x-trajflow-agent': 'a' }), { trajflow_agent: 'b' }, defaults, 'c')),
    'metadata.trajflow_agent',
  );
  assert.equal(
    param(() => callIdentity(headers({ 'x-trajflow-episode': 'e'.repeat(250), 'x-trajflow-agent': 'planner' }), {}, defaults, 'c')),
    'x-trajflow-agent',
  );
});

test('finish body: call_rewards is an object of answer ids to finite rewards', () => {
  assert.deepEqual(parseFinishRequest({ reward: 1, call_rewards: { 'chatcmpl-a': 0.5, msg_b: -1 } }).outcome.callRewards, { 'chatcmpl-a': 0.5, msg_b: -1 });
  assert.equal(parseFinishRequest({ reward: 1 }).outcome.callRewards, undefined);
  assert.equal(
    param(() => parseFinishRequest({ reward: 1, call_rewards: [0.5] })),
    'call_rewards',
  );
  assert.equal(
    param(() => parseFinishRequest({ reward: 1, call_rewards: { 'chatcmpl-a': 'high' } })),
    'call_rewards.chatcmpl-a',
  );
  assert.equal(
    param(() => parseFinishRequest({ reward: 1, call_rewards: { x: 1e12 } })),
    'call_rewards.x',
  );
});

test('step rewards: turn rewards by index, call rewards by answer id onto the trajectory that made the call', () => {
  const planner = {
    episodeId: 'e/planner',
    turns: 2,
    calls: new Map([
      ['c0', 0],
      ['c2', 1],
    ]),
  };
  const coder = { episodeId: 'e/coder', turns: 1, calls: new Map([['c1', 0]]) };
  const base = { reward: 1, turnRewards: [], success: true, terminated: true, truncated: false, reason: 'finish' as const };
  const rewards = stepRewardsOf({ ...base, callRewards: { c2: 0.5, c1: -0.25 } }, [planner, coder]);
  assert.deepEqual(
    rewards.map((m) => [...m]),
    [[[1, 0.5]], [[0, -0.25]]],
  );
  assert.deepEqual(
    [...stepRewardsOf({ ...base, turnRewards: [0.1, 0.2], callRewards: { c2: 0.3 } }, [planner])[0]!],
    [
      [0, 0.1],
      [1, 0.2 + 0.3],
    ],
  );
  assert.equal(
    param(() => stepRewardsOf({ ...base, callRewards: { nope: 1 } }, [planner, coder])),
    'call_rewards.nope',
  );
  assert.equal(
    param(() => stepRewardsOf({ ...base, turnRewards: [1] }, [planner, coder])),
    'turn_rewards',
  );
  assert.equal(
    param(() => stepRewardsOf({ ...base, turnRewards: [1, 2, 3] }, [planner])),
    'turn_rewards',
  );
});

/** A recorder over an upstream that always answers and a publisher that keeps what it got. */
function recorder(book = new EpisodeBook({ timeoutMs: 60_000 })) {
  const published: StepEvent[] = [];
  let calls = 0;
  const upstream: Upstream = {
    name: 'fake',
    models: () => ['m'],
    complete: async () => ({
      model: 'm',
      policyVersion: 1,
      promptText: 'user: go',
      promptTokenIds: [1],
      promptScope: 'turn',
      choices: [{ text: 'x', tokenIds: [7], logProbs: [-1], tokens: ['x'], topLogProbs: [], finishReason: 'stop', toolCalls: null }],
      usage: { promptTokens: 1, completionTokens: 1 },
      info: {},
    }),
  };
  const steps = { publishAll: async (events: readonly StepEvent[]) => void published.push(...events) };
  const rec = new CallRecorder({ upstream, steps, book, defaults, publishTimeoutMs: 1000, episodeTimeoutMs: 60_000, newCallId: () => `call-${calls++}` });
  const call = (agent: string, seed: number) =>
    rec.call(
      parseChatRequest({ model: 'm', messages: [{ role: 'user', content: `go ${seed}` }] }),
      headers({ 'x-trajflow-episode': 'ep', 'x-trajflow-group': 'task', 'x-trajflow-group-size': '2', 'x-trajflow-agent': agent }),
    );
  return { rec, published, call, book };
}

test('an episode of two agents: turn indices per agent, one outcome step each, a call reward on its own step', async () => {
  const { rec, published, call } = await recorder();
  await call('planner', 0);
  await call('coder', 1);
  await call('planner', 2);
  assert.deepEqual(
    published.map((s) => [s.episodeId, s.groupId, s.stepIndex, s.info.agent, s.info.callId]),
    [
      ['ep/planner', 'task/planner', 0, 'planner', 'call-0'],
      ['ep/coder', 'task/coder', 0, 'coder', 'call-1'],
      ['ep/planner', 'task/planner', 1, 'planner', 'call-2'],
    ],
  );
  const ends = await rec.finish('run-d', 'ep', { reward: 1, turnRewards: [], callRewards: { 'call-2': 0.5 }, success: true, terminated: true, truncated: false, reason: 'finish' });
  assert.deepEqual(
    ends.map((s) => [s.episodeId, s.groupId, s.stepIndex, s.reward, s.info.agent, s.info.stepRewards, s.info.groupSize]),
    [
      ['ep/planner', 'task/planner', 2, 1.5, 'planner', '{"1":0.5}', '2'],
      ['ep/coder', 'task/coder', 1, 1, 'coder', undefined, '2'],
    ],
  );
  for (const step of published) validateIngestStep(step);
  const planner = trajectoryFromSteps(published.filter((s) => s.episodeId === 'ep/planner')).trajectory;
  assert.deepEqual([planner.outcome, planner.totalReward, planner.steps.map((s) => s.reward)], ['terminated', 1.5, [0, 0.5, 1]]);
  assert.equal(rec.stats.episodesFinished, 2);
  await assert.rejects(
    rec.finish('run-d', 'ep', { reward: 1, turnRewards: [], success: null, terminated: true, truncated: false, reason: 'finish' }),
    (e: OpenAIError) => e.status === 409,
  );
  await assert.rejects(call('planner', 3), (e: OpenAIError) => e.status === 409);
});

test('a call reward for no call of the episode is a 400 and ends nothing', async () => {
  const { rec, call, book } = await recorder();
  await call('planner', 0);
  const outcome = { reward: 1, turnRewards: [], callRewards: { 'call-9': 1 }, success: null, terminated: true, truncated: false, reason: 'finish' as const };
  await assert.rejects(rec.finish('run-d', 'ep', outcome), (e: OpenAIError) => e.status === 400 && e.param === 'call_rewards.call-9');
  assert.equal(book.trajectories('run-d', 'ep').length, 1);
});

test("a book rebuilt from the log knows an episode's agents, their answer ids, and that a finish ended them", async () => {
  const first = await recorder();
  await first.call('planner', 0);
  await first.call('coder', 1);
  const rebuilt = new EpisodeBook({ timeoutMs: 60_000 });
  for (const step of first.published) rebuilt.observe(step);
  assert.deepEqual(
    rebuilt.trajectories('run-d', 'ep').map((s) => [s.identity.episodeId, s.identity.agent?.name, s.nextStep]),
    [
      ['ep/planner', 'planner', 1],
      ['ep/coder', 'coder', 1],
    ],
  );
  assert.equal(rebuilt.callStep('run-d', 'ep/coder', 'call-1'), 0);
  const second = await recorder(rebuilt);
  const ends = await second.rec.finish('run-d', 'ep', {
    reward: 0,
    turnRewards: [],
    callRewards: { 'call-1': 2 },
    success: false,
    terminated: true,
    truncated: false,
    reason: 'finish',
  });
  assert.deepEqual(
    ends.map((s) => [s.episodeId, s.stepIndex, s.reward]),
    [
      ['ep/planner', 1, 0],
      ['ep/coder', 1, 2],
    ],
  );
  const again = new EpisodeBook({ timeoutMs: 60_000 });
  for (const step of [...first.published, ...second.published]) again.observe(step);
  assert.deepEqual([again.trajectories('run-d', 'ep').length, again.endedAs('run-d', 'ep')], [0, 'finished']);
});
