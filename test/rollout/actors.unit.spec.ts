// The actors with an in-memory publisher: what they produce, in which order, with which policy version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actorsConfig, PolicyHistory, RolloutActors, StalenessGate, type ActorsConfigInput } from '../../rollout/index.js';
import { createRandomPolicyProvider, type PolicyProvider } from '../../envs/policy/index.js';
import type { PolicyVersionEvent, StepEvent } from '../../schemas/index.js';

function recorder() {
  const events: StepEvent[] = [];
  return { events, publish: async (event: StepEvent) => void events.push(event) };
}

function actors(input: Partial<ActorsConfigInput>, deps: { provider?: PolicyProvider; gate?: StalenessGate; history?: PolicyHistory } = {}) {
  const config = actorsConfig({ runId: 'unit', envName: 'FrozenLake', groups: 3, groupSize: 4, iterations: 2, progressEveryMs: 0, ...input });
  const { events, publish } = recorder();
  let t = 0;
  const run = new RolloutActors(config, {
    provider: deps.provider ?? createRandomPolicyProvider(),
    gate: deps.gate ?? new StalenessGate(config.maxStaleness),
    ...(deps.history ? { history: deps.history } : {}),
    publish,
    clock: () => ++t,
  });
  return { run, events, config };
}

function byEpisode(events: StepEvent[]): Map<string, StepEvent[]> {
  const episodes = new Map<string, StepEvent[]>();
  for (const e of events) episodes.set(e.episodeId, [...(episodes.get(e.episodeId) ?? []), e]);
  return episodes;
}

/** Lets the actors run (they yield to the event loop between episodes) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

const version = (v: number): PolicyVersionEvent => ({
  runId: 'unit',
  version: v,
  weightsUri: 'none://',
  checksum: 'a'.repeat(64),
  parentVersion: v - 1,
  learnerStep: v,
  createdAtMs: 1,
  metrics: {},
});

test('runs iterations × P × G episodes, each with steps 0..n-1 ending terminated or truncated', async () => {
  const { run, events } = actors({});
  const summary = await run.run();
  const episodes = byEpisode(events);
  assert.equal(episodes.size, 2 * 3 * 4);
  assert.equal(summary.episodes, 24);
  assert.equal(summary.steps, events.length);
  assert.equal(summary.stopped, false);
  for (const [id, steps] of episodes) {
    assert.deepEqual(
      steps.map((s) => s.stepIndex),
      steps.map((_, i) => i),
      id,
    );
    const last = steps.at(-1)!;
    assert.ok(last.terminated || last.truncated, id);
  }
  const groups = new Set(events.map((e) => e.groupId));
  assert.deepEqual([...groups].sort(), ['unit/g0', 'unit/g1', 'unit/g2', 'unit/g3', 'unit/g4', 'unit/g5']);
});

test('every rollout of a group starts from the group seed; the rollouts act differently', async () => {
  const { run, events } = actors({ seedBase: 500 });
  await run.run();
  for (const [, steps] of byEpisode(events)) {
    const g = Number(steps[0]!.groupId.split('/g')[1]);
    assert.equal(steps[0]!.info.groupSeed, String(500 + g));
    assert.equal(steps[0]!.info.groupSize, '4');
  }
  const firstObservations = new Set(events.filter((e) => e.groupId === 'unit/g0' && e.stepIndex === 0).map((e) => e.observation));
  assert.equal(firstObservations.size, 1, 'one task per group');
  const firstActions = new Set(events.filter((e) => e.groupId === 'unit/g0' && e.stepIndex === 0).map((e) => e.action));
  assert.ok(firstActions.size > 1, 'rollouts sample independently');
});

test('the same config gives the same events except times', async () => {
  const a = actors({ envName: 'Sokoban' });
  const b = actors({ envName: 'Sokoban' });
  await Promise.all([a.run.run(), b.run.run()]);
  const norm = (events: StepEvent[]) => events.map((e) => ({ ...e, eventTimeMs: 0 })).sort((x, y) => x.eventId.localeCompare(y.eventId));
  assert.deepEqual(norm(a.events), norm(b.events));
});

test('Bandit rollouts of one group draw their own high-arm rewards (rewardSeedOffset = rollout)', async () => {
  // With probability 0.25 of paying, 64 pulls of the high arm in one group all paying the same would be
  // a sign that every rollout shares one reward draw.
  const { run, events } = actors({ envName: 'Bandit', groups: 1, groupSize: 64, iterations: 1 });
  await run.run();
  const hi = events.filter((e) => e.action.includes('Dragon')).map((e) => e.reward);
  assert.ok(hi.length > 10);
  assert.equal(new Set(hi).size, 2, `high-arm rewards ${JSON.stringify(hi)}`);
});

test('stop() starts no new iteration but completes the started ones, every group of them', async () => {
  const { run, events } = actors({ iterations: null, groups: 2, groupSize: 3 });
  const done = run.run();
  // Let some work happen, then stop: every group seen must have all 3 episodes, every iteration seen both groups.
  await until(() => run.stats.episodes >= 10);
  const summary = await run.stop();
  assert.equal(summary.stopped, true);
  assert.equal(await done, summary);
  const perGroup = new Map<string, Set<string>>();
  for (const e of events) perGroup.set(e.groupId, (perGroup.get(e.groupId) ?? new Set()).add(e.episodeId));
  for (const [group, episodes] of perGroup) assert.equal(episodes.size, 3, group);
  assert.equal(perGroup.size, 2 * (summary.iteration + 1), `iterations 0 … ${summary.iteration}, two groups each`);
  assert.equal(summary.episodes, perGroup.size * 3);
});

test('a stop right after the first episode of an iteration run ahead into completes that iteration, every group of it', async () => {
  // 2 groups × 2 per iteration, one ahead of the learner. Group 1's episodes are held (their publishes wait), so
  // group 0's workers move on to iteration 1 alone; the stop comes at its first step, before its second group started.
  const config = actorsConfig({ runId: 'unit', envName: 'FrozenLake', groups: 2, groupSize: 2, iterations: null, maxStaleness: 1, progressEveryMs: 0 });
  const provider = createRandomPolicyProvider();
  const events: StepEvent[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let stopped: Promise<unknown> | undefined;
  const run: RolloutActors = new RolloutActors(config, {
    provider,
    gate: new StalenessGate(1),
    history: new PolicyHistory(provider.current()),
    publish: async (event) => {
      events.push(event);
      if (event.info.iteration === '1') stopped ??= run.stop();
      if (event.groupId === 'unit/g1') await held;
    },
  });
  const done = run.run();
  await until(() => stopped !== undefined);
  release();
  const summary = await done;
  assert.equal(summary.iteration, 1);
  const groupsOf = (iteration: string) => new Set(events.filter((e) => e.info.iteration === iteration).map((e) => e.groupId));
  assert.deepEqual([...groupsOf('1')].sort(), ['unit/g2', 'unit/g3'], 'both groups of iteration 1');
  assert.equal(new Set(events.filter((e) => e.info.iteration === '1').map((e) => e.episodeId)).size, 4, 'all four episodes of iteration 1');
  assert.equal(groupsOf('2').size, 0, 'no later iteration started');
});

test('the staleness bound holds the next iteration until a newer version, which the freed episodes use', async () => {
  const provider = createRandomPolicyProvider();
  const gate = new StalenessGate(0);
  const { run, events } = actors({ maxStaleness: 0, iterations: 3, groups: 2, groupSize: 2 }, { provider, gate });
  const done = run.run();
  await until(() => run.stats.episodes === 4 && run.stats.blockedIteration === 1);
  assert.equal(gate.waiting, 4);
  assert.ok(events.every((e) => e.info.iteration === '0' && e.policyVersion === 0));
  // What the version follower does for each event: the provider first, then the gate.
  await provider.onVersion(version(1));
  gate.observe(1);
  await until(() => run.stats.episodes === 8 && run.stats.blockedIteration === 2);
  assert.ok(events.filter((e) => e.info.iteration === '1').every((e) => e.policyVersion === 1));
  await provider.onVersion(version(2));
  gate.observe(2);
  const summary = await done;
  assert.equal(summary.episodes, 12);
  assert.ok(events.filter((e) => e.info.iteration === '2').every((e) => e.policyVersion === 2));
});

test('at max staleness 1 iteration i samples with exactly version i − 1, even when a newer one has loaded', async () => {
  const provider = createRandomPolicyProvider();
  const gate = new StalenessGate(1);
  const history = new PolicyHistory(provider.current());
  const { run, events } = actors({ maxStaleness: 1, iterations: 4, groups: 2, groupSize: 2 }, { provider, gate, history });
  const done = run.run();
  await until(() => run.stats.episodes === 8 && run.stats.blockedIteration === 2);
  // What the version follower does for each event: the provider, the history, then the gate. Versions 1 and 2
  // arrive together: iteration 2 must still sample with version 1.
  for (const v of [1, 2]) {
    await provider.onVersion(version(v));
    history.record(provider.current(), v);
    gate.observe(v);
  }
  const summary = await done;
  assert.equal(summary.episodes, 16);
  for (const [iteration, expected] of [
    ['0', 0],
    ['1', 0],
    ['2', 1],
    ['3', 2],
  ] as const) {
    const steps = events.filter((e) => e.info.iteration === iteration);
    assert.ok(steps.length > 0 && steps.every((e) => e.policyVersion === expected), `iteration ${iteration} sampled with version ${expected}`);
  }
  assert.deepEqual(history.versions, [2], 'versions no later iteration needs are let go');
});

test('max staleness ≥ 1 without a history of versions is refused with a message', () => {
  const config = actorsConfig({ runId: 'unit', envName: 'Bandit', groups: 1, groupSize: 2, iterations: 3, maxStaleness: 1, progressEveryMs: 0 });
  assert.throws(
    () => new RolloutActors(config, { provider: createRandomPolicyProvider(), gate: new StalenessGate(1), publish: async () => {} }),
    /maxStaleness=1 samples iteration i with version i − 1, which needs the versions' history/,
  );
});

test('a failing publish fails the run with that error', async () => {
  const config = actorsConfig({ runId: 'unit', envName: 'Bandit', groups: 1, groupSize: 2, iterations: 3, progressEveryMs: 0 });
  const run = new RolloutActors(config, {
    provider: createRandomPolicyProvider(),
    gate: new StalenessGate(null),
    publish: async () => {
      throw new Error('broker gone');
    },
  });
  await assert.rejects(run.run(), /broker gone/);
});

test('actor processes sharing a run (--shard i/n) play disjoint groups that together are the whole run, with the same events', async () => {
  const whole = actors({});
  await whole.run.run();
  const shards = [actors({ shard: { index: 0, count: 2 } }), actors({ shard: { index: 1, count: 2 } })];
  await Promise.all(shards.map((s) => s.run.run()));
  const groupsOf = (events: StepEvent[]) => [...new Set(events.map((e) => e.groupId))].sort();
  assert.deepEqual(groupsOf(shards[0]!.events), ['unit/g0', 'unit/g2', 'unit/g4']);
  assert.deepEqual(groupsOf(shards[1]!.events), ['unit/g1', 'unit/g3', 'unit/g5']);
  const strip = (e: StepEvent) => ({ ...e, eventTimeMs: 0 });
  const sorted = (events: StepEvent[]) => events.map(strip).sort((a, b) => (a.eventId < b.eventId ? -1 : 1));
  assert.deepEqual(sorted([...shards[0]!.events, ...shards[1]!.events]), sorted(whole.events), 'the same episodes, step for step');
  for (const e of whole.events) assert.equal(e.info.batchGroups, '3', "every step names its iteration's group count");
  assert.throws(() => actorsConfig({ runId: 'unit', envName: 'FrozenLake', groups: 3, shard: { index: 0, count: 4 } }), /shard count=4 must be an integer between 1 and 3/);
  assert.throws(() => actorsConfig({ runId: 'unit', envName: 'FrozenLake', groups: 3, shard: { index: 2, count: 2 } }), /shard index=2/);
});
