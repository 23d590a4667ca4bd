// Unit: `trajflow train`'s config from its flags (cli/train/config.ts): the environment's preset with the flags
// over it, every value checked with a message that says what to pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTrainConfig, updatesOf } from '../../cli/train/config.js';
import { TRAIN_PRESETS } from '../../cli/train/presets.js';

test("no flags: FrozenLake's preset, on-policy, seed 1, evaluations every 10 versions on 100 tasks", () => {
  const s = buildTrainConfig({});
  assert.equal(s.preset, TRAIN_PRESETS.FrozenLake);
  assert.deepEqual(
    {
      env: s.env,
      estimator: s.estimator,
      runId: s.runId,
      groups: s.groups,
      groupSize: s.groupSize,
      lr: s.lr,
      maxStaleness: s.maxStaleness,
      seed: s.seed,
      taskSeeds: s.taskSeeds,
      evalEvery: s.evalEvery,
      evalTasks: s.evalTasks,
      port: s.port,
      filters: s.filters,
    },
    {
      env: 'FrozenLake',
      estimator: 'gigpo',
      runId: 'train-FrozenLake-gigpo',
      groups: 8,
      groupSize: 8,
      lr: 1e-3,
      maxStaleness: '0',
      seed: 1,
      taskSeeds: 1_000_000,
      evalEvery: 10,
      evalTasks: 100,
      port: '18080',
      filters: [],
    },
  );
  assert.equal(s.envOptions, JSON.stringify(TRAIN_PRESETS.FrozenLake!.envOptions));
  assert.equal(updatesOf(s), undefined, 'no --updates: until stopped');
});

test('flags win over the preset', () => {
  const s = buildTrainConfig({
    '--env': 'Bandit',
    '--estimator': 'grpo',
    '--groups': '4',
    '--lr': '0.01',
    '--max-staleness': '1',
    '--seed': '7',
    '--filter': 'zero_variance',
    '--updates': '10',
    '--env-options': '{}',
    '--port': '9000',
  });
  assert.deepEqual(
    {
      runId: s.runId,
      groups: s.groups,
      groupSize: s.groupSize,
      lr: s.lr,
      maxStaleness: s.maxStaleness,
      taskSeeds: s.taskSeeds,
      filters: s.filters,
      envOptions: s.envOptions,
      port: s.port,
    },
    { runId: 'train-Bandit-grpo', groups: 4, groupSize: 8, lr: 0.01, maxStaleness: '1', taskSeeds: 7_000_000, filters: ['zero_variance'], envOptions: '{}', port: '9000' },
  );
  assert.equal(updatesOf(s), 10);
});

test('refused: an unknown environment, a bad number, a seed of 1000 or more, --updates 0', () => {
  assert.throws(() => buildTrainConfig({ '--env': 'Chess' }), /--env Chess: trajflow train knows FrozenLake, Sokoban, Bandit/);
  assert.throws(() => buildTrainConfig({ '--groups': '0' }), /--groups needs a positive integer/);
  assert.throws(() => buildTrainConfig({ '--lr': '-1' }), /--lr needs a positive number/);
  assert.throws(() => buildTrainConfig({ '--max-staleness': '-1' }), /--max-staleness needs a non-negative integer/);
  assert.throws(() => buildTrainConfig({ '--seed': '1000' }), /a run seed is below 1000/);
  assert.throws(() => updatesOf(buildTrainConfig({ '--updates': '0' })), /--updates needs a positive integer/);
});

test('--gateway PORT adds a gateway; --actors off needs it; bad values name the flag', () => {
  const none = buildTrainConfig({});
  assert.equal(none.gatewayPort, null);
  assert.equal(none.actors, true);
  const both = buildTrainConfig({ '--gateway': '18090' });
  assert.deepEqual([both.gatewayPort, both.actors], [18090, true]);
  const agentsOnly = buildTrainConfig({ '--gateway': '18090', '--actors': 'off' });
  assert.deepEqual([agentsOnly.gatewayPort, agentsOnly.actors], [18090, false]);
  assert.throws(() => buildTrainConfig({ '--actors': 'off' }), /--actors off leaves the run without steps: add --gateway PORT/);
  assert.throws(() => buildTrainConfig({ '--gateway': '18090', '--actors': 'no' }), /--actors no: say on \(the default\) or off/);
  assert.throws(() => buildTrainConfig({ '--gateway': '70000' }), /--gateway 70000: a port is 1–65535/);
  assert.throws(() => buildTrainConfig({ '--gateway': 'x' }), /gateway/);
});
