import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BanditEnv } from '../../envs/bandit.js';

const pull = (arm: string) => `<think>symbolism</think><answer>${arm}</answer>`;

describe('Bandit (docs/algorithms.md §4.5)', () => {
  test("the first observation is RAGEN's prompt with both arms; the state key is the arm order", () => {
    const env = new BanditEnv();
    const reset = env.reset(0);
    assert.match(reset.observation, /^You are playing a bandit game\./);
    assert.match(reset.observation, /There are 2 arms, named (Phoenix and Dragon|Dragon and Phoenix)$/m);
    assert.match(reset.stateKey, /^arms:(Phoenix\|Dragon|Dragon\|Phoenix)$/);
    assert.equal(env.render(), reset.observation);
  });

  test('the arm order is swapped at random per reset, about half the time', () => {
    const env = new BanditEnv();
    let phoenixFirst = 0;
    for (let seed = 0; seed < 2000; seed++) if (env.reset(seed).stateKey === 'arms:Phoenix|Dragon') phoenixFirst += 1;
    assert.ok(Math.abs(phoenixFirst / 2000 - 0.5) < 0.04, `${phoenixFirst}`);
  });

  test('low arm: always 0.1 (the code\'s value), "Phoenix: 0.1 points", success 0, terminated', () => {
    const env = new BanditEnv();
    for (let seed = 0; seed < 50; seed++) {
      env.reset(seed);
      const r = env.step(pull('phoenix'));
      assert.equal(r.reward, 0.1);
      assert.equal(r.observation, 'Phoenix: 0.1 points');
      assert.deepEqual([r.terminated, r.truncated, r.actionValid], [true, false, true]);
      assert.equal(r.metrics.success, 0);
      assert.equal(r.stateKey, 'pulled:Phoenix');
    }
  });

  test('high arm: 1.0 with probability 0.25, else 0.0; success 1', () => {
    const env = new BanditEnv();
    let high = 0;
    const n = 4000;
    for (let seed = 0; seed < n; seed++) {
      env.reset(seed);
      const r = env.step(pull('Dragon'));
      assert.ok(r.reward === 1 || r.reward === 0);
      assert.equal(r.observation, `Dragon: ${r.reward === 1 ? '1.0' : '0.0'} points`);
      assert.equal(r.metrics.success, 1);
      high += r.reward;
    }
    assert.ok(Math.abs(high / n - 0.25) < 0.025, `${high / n}`);
  });

  test("the paper's 0.15, other names, and per-rollout reward draws are options", () => {
    const env = new BanditEnv({ loArmName: 'Trader', hiArmName: 'Librarian', loArmScore: 0.15 });
    env.reset(1);
    assert.equal(env.step(pull('Trader')).observation, 'Trader: 0.15 points');
    assert.deepEqual(env.actionVocabulary, ['Librarian', 'Trader']);
    const draws = (offset: number) =>
      Array.from({ length: 40 }, (_, seed) => {
        const e = new BanditEnv({ rewardSeedOffset: offset });
        e.reset(seed);
        return e.step(pull('Dragon')).reward;
      });
    assert.deepEqual(draws(0), draws(0));
    assert.notDeepEqual(draws(0), draws(1));
  });

  test('an unknown arm is invalid: nothing is pulled and the single turn ends truncated', () => {
    const env = new BanditEnv();
    const reset = env.reset(5);
    const r = env.step(pull('Unicorn'));
    assert.deepEqual([r.actionValid, r.terminated, r.truncated, r.reward], [false, false, true, 0]);
    assert.equal(r.stateKey, reset.stateKey);
    assert.equal(r.metrics.success, 0);
    assert.match(r.info.invalidReason ?? '', /Unicorn/);
  });

  test('only the first arm of "A || B" counts (one action per turn)', () => {
    const env = new BanditEnv();
    env.reset(2);
    const r = env.step('<answer>Phoenix || Dragon</answer>');
    assert.equal(r.observation, 'Phoenix: 0.1 points');
    assert.equal(r.metrics.actionsIgnored, 1);
    assert.equal(r.actionValid, true);
  });

  test('the system prompt names both arms without revealing which is which', () => {
    const prompt = new BanditEnv().systemPrompt();
    assert.ok(prompt.indexOf('Dragon') < prompt.indexOf('Phoenix'), 'alphabetical');
    assert.match(prompt, /<answer>/);
  });
});
