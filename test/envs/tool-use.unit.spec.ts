import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CalculatorError, evaluate, formatNumber } from '../../envs/calculator.js';
import { Rng } from '../../core/rng.js';
import { ToolUseEnv } from '../../envs/tool-use.js';
import { generateWordProblem, WORD_PROBLEM_KINDS } from '../../envs/word-problems.js';

describe('calculator (no eval)', () => {
  const values: [string, number][] = [
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['-3 + +4', 1],
    ['-(2 + 3) * -2', 10],
    ['2.5 * 4', 10],
    ['.5 + 1.', 1.5],
    ['  7  ', 7],
    ['23 * 17 - 448', -57],
  ];
  for (const [expression, value] of values) test(`${expression} = ${value}`, () => assert.equal(evaluate(expression), value));

  const errors: [string, RegExp][] = [
    ['', /empty/],
    ['1 +', /expected a number at the end/],
    ['2 * (3 + 4', /expected '\)'/],
    ['1 / 0', /division by zero/],
    ['1 / (2 - 2)', /division by zero/],
    ['process.exit()', /expected a number at position 1/],
    ['2 ** 3', /expected a number at position 4/],
    ['1 2', /unexpected character at position 3/],
    ['9'.repeat(201), /longer than 200/],
    [`${'('.repeat(40)}1${')'.repeat(40)}`, /nested/],
    [`${'-'.repeat(60)}1`, /nested/],
    ['1e5', /unexpected character at position 2/],
    ['Math.PI', /expected a number at position 1/],
  ];
  for (const [expression, message] of errors) {
    test(`rejects ${JSON.stringify(expression.slice(0, 20))}`, () =>
      assert.throws(
        () => evaluate(expression),
        (e: unknown) => e instanceof CalculatorError && message.test(e.message),
      ));
  }

  test('agrees with JavaScript arithmetic on generated expressions (property)', () => {
    const expr = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.integer({ min: 0, max: 999 }).map(String),
        fc.tuple(tie('node'), fc.constantFrom('+', '-', '*'), tie('node')).map(([a, op, b]) => `(${a} ${op} ${b})`),
      ),
    })).node as fc.Arbitrary<string>;
    fc.assert(
      fc.property(expr, (e) => {
        // The expression only holds integers, parentheses and + - *, so Function would compute it exactly; compare by hand instead.
        const reference = e.replace(/\s/g, '');
        assert.equal(evaluate(e), computeReference(reference));
      }),
      { numRuns: 300 },
    );
  });

  test('formatNumber drops float noise', () => {
    assert.equal(formatNumber(0.1 + 0.2), '0.3');
    assert.equal(formatNumber(-0), '0');
    assert.equal(formatNumber(391), '391');
    assert.equal(formatNumber(10 / 3), '3.33333333333');
  });
});

/** A tiny independent evaluator for fully parenthesised expressions: "(a op b)" or an integer. */
function computeReference(e: string): number {
  if (!e.startsWith('(')) return Number(e);
  let depth = 0;
  for (let i = 1; i < e.length - 1; i++) {
    const ch = e[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0 && (ch === '+' || ch === '-' || ch === '*') && i > 1) {
      const [a, b] = [computeReference(e.slice(1, i)), computeReference(e.slice(i + 1, -1))];
      return ch === '+' ? a + b : ch === '-' ? a - b : a * b;
    }
  }
  throw new Error(`bad reference expression ${e}`);
}

describe('word problems', () => {
  test('every kind appears, answers are positive integers, the text holds the numbers', () => {
    const kinds = new Set<string>();
    for (let seed = 0; seed < 600; seed++) {
      const p = generateWordProblem(new Rng(seed, 1));
      kinds.add(p.kind);
      assert.ok(Number.isInteger(p.answer) && p.answer > 0, `${p.kind}: ${p.answer}`);
      for (const n of p.numbers) assert.ok(p.text.includes(String(n)));
    }
    assert.deepEqual([...kinds].sort(), [...WORD_PROBLEM_KINDS].sort());
  });
});

describe('ToolUse environment', () => {
  const solve = (env: ToolUseEnv) => env.task.answer;

  test('calc returns the calculator output as the next observation (reward 0), then a right final answer wins', () => {
    const env = new ToolUseEnv();
    const reset = env.reset(1);
    assert.match(reset.observation, /^Problem: .+\?$/);
    const [a, b] = env.task.numbers as [number, number];
    const call = env.step(`<think>multiply first</think><answer>calc: ${a} * ${b}</answer>`);
    assert.equal(call.observation, `Calculator: ${a} * ${b} = ${a * b}`);
    assert.deepEqual([call.reward, call.terminated, call.truncated, call.actionValid], [0, false, false, true]);
    assert.deepEqual([call.info.observationSource, call.info.toolOutput, call.metrics.toolCalls], ['tool', String(a * b), 1]);
    assert.notEqual(call.stateKey, reset.stateKey);
    assert.ok(!('success' in call.metrics));
    const final = env.step(`<answer>final: ${solve(env)}</answer>`);
    assert.deepEqual([final.reward, final.terminated, final.truncated, final.metrics.success], [1, true, false, 1]);
    assert.match(final.observation, /is correct/);
  });

  test('a wrong final answer: reward 0, terminated, success 0; a bare number counts as final', () => {
    const env = new ToolUseEnv();
    env.reset(2);
    const r = env.step(`<answer>${solve(env) + 1}</answer>`);
    assert.deepEqual([r.reward, r.terminated, r.metrics.success, r.info.endReason], [0, true, 0, 'wrong']);
    env.reset(2);
    assert.equal(env.step(`<answer>FINAL: ${solve(env)}.</answer>`).reward, 1);
  });

  test('invalid turns are reported with a hint and leave the state unchanged', () => {
    const env = new ToolUseEnv();
    const reset = env.reset(3);
    for (const [reply, reason] of [
      ['calc: 1 + 1', /no <answer>/],
      ['<answer>calc: 2 +</answer>', /calculator error: expected a number/],
      ['<answer>calc: 1/0</answer>', /division by zero/],
      ['<answer>final: twelve</answer>', /not a number/],
    ] as const) {
      const env2 = new ToolUseEnv();
      env2.reset(3);
      const r = env2.step(reply);
      assert.equal(r.actionValid, false, reply);
      assert.match(r.info.invalidReason ?? '', reason);
      assert.match(r.observation, /^Invalid action: .*<answer>calc:/);
      assert.equal(r.stateKey, reset.stateKey);
      assert.equal(r.reward, 0);
    }
    assert.equal(env.render(), reset.observation);
  });

  test('the turn limit truncates without a final answer', () => {
    const env = new ToolUseEnv({ maxTurns: 2 });
    env.reset(4);
    env.step('<answer>calc: 1 + 1</answer>');
    const r = env.step('<answer>calc: 2 + 2</answer>');
    assert.deepEqual([r.truncated, r.terminated, r.metrics.success, r.info.endReason], [true, false, 0, 'max-turns']);
  });

  test('the state key is the problem plus the distinct values computed, in any order', () => {
    const keyAfter = (calls: string[]) => {
      const env = new ToolUseEnv();
      env.reset(5);
      let key = '';
      for (const c of calls) key = env.step(`<answer>calc: ${c}</answer>`).stateKey;
      return key;
    };
    assert.equal(keyAfter(['2 * 3', '10 + 1']), keyAfter(['5 + 6', '3 * 2']));
    assert.notEqual(keyAfter(['2 * 3']), keyAfter(['2 * 4']));
  });

  test('validActions lists calculator calls on known numbers and final answers', () => {
    const env = new ToolUseEnv();
    env.reset(6);
    const [a, b] = env.task.numbers as [number, number];
    const actions = env.validActions();
    assert.ok(actions.includes(`calc: ${a} * ${b}`));
    assert.ok(actions.includes(`final: ${a}`));
    env.step(`<answer>calc: ${a} * ${b}</answer>`);
    assert.ok(env.validActions().includes(`final: ${a * b}`));
  });
});

describe('ToolUse: one command per turn', () => {
  test('commands after "||" are ignored and reported', () => {
    const env = new ToolUseEnv();
    env.reset(8);
    const r = env.step('<answer>calc: 2 + 2 || final: 4</answer>');
    assert.deepEqual([r.terminated, r.actionValid, r.metrics.actionsIgnored, r.info.ignoredActions], [false, true, 1, 'final: 4']);
  });
});
