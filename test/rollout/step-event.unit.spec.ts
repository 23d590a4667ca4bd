import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildStepEvent, runEpisode, type EpisodeContext } from '../../rollout/index.js';
import { createEnv } from '../../envs/index.js';
import { UniformRandomPolicy } from '../../envs/policy/index.js';
import { validateEvent, type StepEvent } from '../../schemas/index.js';

const context = (env: { name: string; version: string }): EpisodeContext => ({
  runId: 'r1',
  env,
  groupId: 'r1/g0',
  episodeId: 'r1/g0/e2',
  groupSize: 8,
  groupSeed: 11,
  rollout: 2,
  iteration: 0,
});

async function episodeEvents(envName: 'FrozenLake' | 'Sokoban' | 'ToolUse' | 'Bandit', seed = 11): Promise<StepEvent[]> {
  const env = createEnv(envName);
  const events: StepEvent[] = [];
  let clock = 1_700_000_000_000;
  await runEpisode({
    context: { ...context(env.id), groupSeed: seed },
    env,
    policy: new UniformRandomPolicy(3),
    publish: async (event) => void events.push(event),
    clock: () => clock++,
  });
  return events;
}

test('step event t carries the observation and state key of the previous result (reset’s for t = 0)', async () => {
  for (const name of ['FrozenLake', 'Sokoban', 'ToolUse', 'Bandit'] as const) {
    const events = await episodeEvents(name);
    // Replay the same actions on a fresh environment and compare with what it returns.
    const env = createEnv(name);
    const reset = env.reset(11);
    let before = { observation: reset.observation, stateKey: reset.stateKey };
    for (const [t, event] of events.entries()) {
      assert.equal(event.stepIndex, t);
      assert.equal(event.observation, before.observation, `${name} step ${t} observation`);
      assert.equal(event.stateKey, before.stateKey, `${name} step ${t} stateKey`);
      const result = env.step(event.action);
      assert.equal(event.reward, result.reward);
      assert.equal(event.terminated, result.terminated);
      assert.equal(event.truncated, result.truncated);
      assert.equal(event.actionValid, result.actionValid);
      assert.deepEqual(event.metrics, result.metrics);
      before = { observation: result.observation, stateKey: result.stateKey };
    }
    const last = events.at(-1)!;
    assert.ok(last.terminated || last.truncated, `${name} ends terminated or truncated`);
    assert.ok(events.slice(0, -1).every((e) => !e.terminated && !e.truncated));
  }
});

test('step events pass the step rules and carry ids, version, group size and log-probs', async () => {
  const events = await episodeEvents('FrozenLake');
  for (const event of events) {
    const check = validateEvent('step', event);
    assert.ok(check.ok, JSON.stringify(check));
    assert.equal(event.eventId, `r1/g0/e2/s${event.stepIndex}`);
    assert.equal(event.episodeId, 'r1/g0/e2');
    assert.equal(event.groupId, 'r1/g0');
    assert.equal(event.envName, 'FrozenLake');
    assert.equal(event.policyVersion, 3);
    assert.equal(event.info.groupSize, '8');
    assert.equal(event.info.groupSeed, '11');
    assert.equal(event.info.rollout, '2');
    assert.equal(event.actionLogProbs.length, event.actionTokenIds.length);
    assert.ok(event.actionLogProbs.every((lp) => lp <= 0));
  }
});

test('the same seed gives the same events except their times', async () => {
  const strip = (events: StepEvent[]) => events.map((e) => ({ ...e, eventTimeMs: 0 }));
  for (const name of ['FrozenLake', 'Sokoban', 'ToolUse', 'Bandit'] as const) {
    assert.deepEqual(strip(await episodeEvents(name, 5)), strip(await episodeEvents(name, 5)), name);
  }
});

test('buildStepEvent copies the reply, so a policy reusing its arrays cannot change a published event', () => {
  const env = createEnv('Bandit');
  const reset = env.reset(1);
  const reply = { text: '<answer>Dragon</answer>', tokenIds: [1, 2], logProbs: [-0.5, -0.5] };
  const result = env.step(reply.text);
  const event = buildStepEvent(context(env.id), { stepIndex: 0, before: reset, reply, policyVersion: 0, result, eventTimeMs: 5 });
  reply.tokenIds.push(3);
  assert.deepEqual(event.actionTokenIds, [1, 2]);
  assert.equal(event.eventTimeMs, 5);
});
