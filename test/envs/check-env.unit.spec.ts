import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkEnv } from '../../envs/check-env.js';
import type { Environment, StepResult } from '../../envs/contract.js';
import { EnvCheckError } from '../../envs/errors.js';
import { createRandomPolicy } from '../../envs/policy/random-policy.js';
import { createEnv, envNames, type EnvName } from '../../envs/registry.js';
import { EVAL_SEEDS } from '../../envs/seeds.js';

describe('checkEnv passes for every environment (Gymnasium tests/envs/test_envs.py)', () => {
  for (const name of envNames) {
    test(name, () => checkEnv(createEnv(name), { seeds: [0, 7, EVAL_SEEDS.first] }));
  }
  test('with non-default options too', () => {
    checkEnv(createEnv('FrozenLake', { slippery: false, size: 6, maxTurns: 3 }));
    checkEnv(createEnv('Sokoban', { rows: 7, cols: 7, maxActionsPerTurn: 2 }));
    checkEnv(createEnv('Bandit', { loArmName: 'Trader', hiArmName: 'Librarian' }));
    checkEnv(createEnv('ToolUse', { maxTurns: 6 }));
  });
});

describe('determinism: two instances, the same seed and replies give the same episode', () => {
  const transcript = (name: EnvName, seed: number) => {
    const env = createEnv(name);
    const policy = createRandomPolicy(seed);
    const results: unknown[] = [env.reset(seed)];
    for (;;) {
      const reply = policy.act(env);
      const r: StepResult = env.step(reply);
      results.push(reply, r, env.render());
      if (r.terminated || r.truncated) return results;
    }
  };
  for (const name of envNames) {
    test(name, () => {
      for (const seed of [0, 1, 2, 12345, EVAL_SEEDS.first + 3]) assert.deepEqual(transcript(name, seed), transcript(name, seed));
      assert.notDeepEqual(transcript(name, 1), transcript(name, 2));
    });
  }
});

/** Wraps an environment, replacing some of its behaviour. */
function broken(base: Environment, override: Partial<Pick<Environment, 'step' | 'reset' | 'systemPrompt'>>): Environment {
  return {
    id: base.id,
    maxTurns: base.maxTurns,
    maxActionsPerTurn: base.maxActionsPerTurn,
    actionVocabulary: base.actionVocabulary,
    reset: override.reset ?? ((seed) => base.reset(seed)),
    step: override.step ?? ((text) => base.step(text)),
    render: () => base.render(),
    systemPrompt: override.systemPrompt ?? (() => base.systemPrompt()),
    validActions: () => base.validActions(),
  };
}

describe('checkEnv catches broken environments', () => {
  const fails = (env: Environment, pattern: RegExp) =>
    assert.throws(
      () => checkEnv(env),
      (e: unknown) => e instanceof EnvCheckError && pattern.test(e.message),
    );

  test('step before reset that does not throw ResetNeededError', () => {
    const base = createEnv('FrozenLake');
    let started = false;
    fails(
      broken(base, {
        reset: (seed) => ((started = true), base.reset(seed)),
        step: (text) => (started ? base.step(text) : ({} as StepResult)),
      }),
      /step before reset/,
    );
  });

  test('an invalid action that throws', () => {
    const base = createEnv('Sokoban');
    fails(
      broken(base, {
        step: (text) =>
          text.includes('<answer>')
            ? base.step(text)
            : (() => {
                throw new Error('boom');
              })(),
      }),
      /invalid action.*threw/,
    );
  });

  test('non-deterministic rewards', () => {
    const base = createEnv('Bandit');
    let calls = 0;
    fails(broken(base, { step: (text) => ({ ...base.step(text), reward: calls++ }) }), /determinism/);
  });

  test('a system prompt that omits an action', () => {
    const base = createEnv('FrozenLake');
    fails(broken(base, { systemPrompt: () => 'Move with Left, Down or Right. <answer>Left</answer>' }), /does not mention the action "Up"/);
  });

  test('a non-finite reward', () => {
    const base = createEnv('FrozenLake');
    fails(broken(base, { step: (text) => ({ ...base.step(text), reward: Number.NaN }) }), /reward must be finite/);
  });
});
