import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actorsConfig, rolloutEnvOptions, type ActorsConfigInput } from '../../rollout/index.js';
import { configFromArgs, parseFlags } from '../../rollout/command.js';
import { ConfigError } from '../../core/errors.js';

const base: ActorsConfigInput = { runId: 'r', envName: 'FrozenLake' };

test('defaults: 8 groups of 8, seed 0, no iteration limit, no staleness bound', () => {
  const c = actorsConfig(base);
  assert.equal(c.groups, 8);
  assert.equal(c.groupSize, 8);
  assert.equal(c.seedBase, 0);
  assert.equal(c.iterations, null);
  assert.equal(c.maxStaleness, null);
  assert.ok(Object.isFrozen(c));
});

test('bad values fail at construction with a message that says what to set', () => {
  const bad: Array<[Partial<ActorsConfigInput>, RegExp]> = [
    [{ runId: '' }, /runId.*--run-id/],
    [{ runId: 'a/b' }, /runId/],
    [{ envName: 'Chess' }, /unknown environment 'Chess'.*FrozenLake/],
    [{ groups: 0 }, /groups=0.*--groups/],
    [{ groupSize: 2.5 }, /groupSize=2.5.*--group-size/],
    [{ groups: 4096, groupSize: 1024 }, /in flight/],
    [{ seedBase: 1_000_000_000 }, /seedBase.*training seed/],
    [{ seedBase: 999_999_990, iterations: 3, groups: 8 }, /outside the training seeds/],
    [{ maxStaleness: -1 }, /maxStaleness.*--max-staleness/],
    [{ iterations: 0 }, /iterations=0/],
    [{ envOptions: { slippery: 'yes' } }, /FrozenLake: option slippery/],
    [{ envOptions: { colour: 1 } }, /unknown option 'colour'/],
    [{ envName: 'Bandit', envOptions: { rewardSeedOffset: 999_999 }, groupSize: 8 }, /rewardSeedOffset/],
  ];
  for (const [override, message] of bad) {
    assert.throws(
      () => actorsConfig({ ...base, ...override }),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      JSON.stringify(override),
    );
  }
});

test('Bandit rollouts get their own reward draws; other environments keep their options', () => {
  assert.deepEqual(rolloutEnvOptions({ envName: 'Bandit', envOptions: {} }, 3), { rewardSeedOffset: 3 });
  assert.deepEqual(rolloutEnvOptions({ envName: 'Bandit', envOptions: { rewardSeedOffset: 10 } }, 3), { rewardSeedOffset: 13 });
  assert.deepEqual(rolloutEnvOptions({ envName: 'FrozenLake', envOptions: { slippery: false } }, 3), { slippery: false });
});

test('the command line maps to the config; --episodes must be whole iterations', () => {
  const c = configFromArgs(['--env', 'Sokoban', '--groups', '4', '--group-size', '2', '--episodes', '16', '--run-id', 'x1', '--seed', '42', '--max-staleness', '1']);
  assert.equal(c.envName, 'Sokoban');
  assert.equal(c.iterations, 2);
  assert.equal(c.seedBase, 42);
  assert.equal(c.maxStaleness, 1);
  assert.equal(c.runId, 'x1');
  assert.deepEqual(configFromArgs(['--env-options', '{"slippery":false}']).envOptions, { slippery: false });
  assert.equal(configFromArgs([], 0).runId, 'FrozenLake-s0-0');
  assert.throws(() => configFromArgs(['--groups', '4', '--group-size', '2', '--episodes', '10']), /multiple of groups × group size = 8.*e\.g\. 8/);
  assert.throws(() => configFromArgs(['--episodes', '64', '--iterations', '1']), /not both/);
  assert.throws(() => parseFlags(['--colour', 'red']), /unknown option '--colour'/);
  assert.throws(() => parseFlags(['--groups']), /--groups needs a value/);
  assert.throws(() => configFromArgs(['--groups', 'many']), /--groups needs a non-negative integer/);
  assert.throws(() => configFromArgs(['--env-options', '{']), /--env-options must be a JSON object/);
});
