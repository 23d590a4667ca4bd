import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../core/errors.js';
import { createEnv, envNames } from '../../envs/registry.js';

describe('createEnv', () => {
  test('builds every environment with its versioned id and RAGEN v1 limits', () => {
    assert.deepEqual([...envNames], ['Bandit', 'FrozenLake', 'Sokoban', 'ToolUse']);
    for (const name of envNames) {
      const env = createEnv(name);
      assert.deepEqual(env.id, { name, version: 'v1' });
    }
    assert.deepEqual([createEnv('Bandit').maxTurns, createEnv('Bandit').maxActionsPerTurn], [1, 1]);
    assert.deepEqual([createEnv('FrozenLake').maxTurns, createEnv('FrozenLake').maxActionsPerTurn], [5, 5]);
    assert.deepEqual([createEnv('Sokoban').maxTurns, createEnv('Sokoban').maxActionsPerTurn], [5, 5]);
    assert.equal(createEnv('FrozenLake', { maxTurns: 9 }).maxTurns, 9);
  });

  const rejected: [string, Record<string, unknown> | undefined, RegExp][] = [
    ['frozenlake', undefined, /unknown environment 'frozenlake'; choose one of Bandit, FrozenLake, Sokoban, ToolUse/],
    ['FrozenLake', { slipery: true }, /unknown option 'slipery'; the options are .*slippery/],
    ['FrozenLake', { frozenProbability: 1.5 }, /frozenProbability=1.5 must be a number between 0.3 and 1/],
    ['FrozenLake', { slippery: 'yes' }, /slippery=yes must be true or false/],
    ['FrozenLake', { maxTurns: 0 }, /maxTurns=0 must be an integer between 1 and/],
    ['Sokoban', { rows: 4 }, /rows=4 must be an integer between 5 and 16/],
    ['Sokoban', { numBoxes: 9 }, /numBoxes=9 must be an integer between 1 and 4/],
    ['Sokoban', { maxActionsPerTurn: 2.5 }, /maxActionsPerTurn=2.5/],
    ['Bandit', { loArmName: 'Dragon' }, /both 'Dragon'; give the arms different names/],
    ['Bandit', { hiArmName: 'a||b' }, /hiArmName="a\|\|b" must be/],
    ['ToolUse', { maxTurns: -1 }, /maxTurns=-1/],
    ['ToolUse', { maxActionsPerTurn: 3 }, /unknown option 'maxActionsPerTurn'/],
  ];
  for (const [name, options, message] of rejected) {
    test(`rejects ${name} ${JSON.stringify(options ?? {})}`, () => {
      assert.throws(
        () => createEnv(name, options),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
    });
  }
});
