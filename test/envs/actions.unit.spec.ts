import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { extractAnswer, formatReply, parseTurn } from '../../envs/actions.js';

const VOCAB = ['Left', 'Down', 'Right', 'Up'] as const;

describe('parseTurn (RAGEN format)', () => {
  const cases: { name: string; text: string; limit?: number; actions: string[]; valid: boolean; dropped?: string[]; ignored?: string[]; think?: string | null }[] = [
    { name: 'one action', text: '<answer>Left</answer>', actions: ['Left'], valid: true, think: null },
    { name: 'think then answer', text: '<think>go left</think><answer>Left</answer>', actions: ['Left'], valid: true, think: 'go left' },
    { name: 'forced <think> in the prompt: reply starts mid-think', text: 'I should go up</think> <answer>Up</answer>', actions: ['Up'], valid: true, think: 'I should go up' },
    { name: 'several actions', text: '<answer>Left || Up || Right</answer>', actions: ['Left', 'Up', 'Right'], valid: true },
    { name: 'case-insensitive actions and tags', text: '<ANSWER> left ||UP </Answer>', actions: ['Left', 'Up'], valid: true },
    { name: 'whitespace and newlines inside the answer', text: '<answer>\n  Down\n||\nDown \n</answer>', actions: ['Down', 'Down'], valid: true },
    { name: 'beyond the limit is ignored, not invalid', text: '<answer>Left || Up || Down</answer>', limit: 2, actions: ['Left', 'Up'], valid: true, ignored: ['Down'] },
    { name: 'unknown action dropped, known ones kept, turn invalid', text: '<answer>Left || Jump || Up</answer>', actions: ['Left', 'Up'], valid: false, dropped: ['Jump'] },
    { name: 'only unknown actions', text: '<answer>north</answer>', actions: [], valid: false, dropped: ['north'] },
    { name: 'empty part between separators', text: '<answer>Left || || Up</answer>', actions: ['Left', 'Up'], valid: false, dropped: [''] },
    { name: 'empty answer', text: '<answer></answer>', actions: [], valid: false },
    { name: 'no answer tag', text: 'Left', actions: [], valid: false },
    { name: 'unclosed answer', text: '<think>x</think><answer>Left', actions: [], valid: false },
    { name: 'answer inside the think part does not count', text: '<think><answer>Left</answer></think>no answer', actions: [], valid: false },
    { name: 'first answer wins', text: '<answer>Up</answer><answer>Down</answer>', actions: ['Up'], valid: true },
    { name: 'single | is not a separator', text: '<answer>Left | Up</answer>', actions: [], valid: false, dropped: ['Left | Up'] },
    { name: 'empty reply', text: '', actions: [], valid: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const parsed = parseTurn(c.text, VOCAB, c.limit ?? 5);
      assert.deepEqual(parsed.actions, c.actions);
      assert.equal(parsed.valid, c.valid, `valid (problem: ${parsed.problem})`);
      assert.equal(parsed.problem === null, c.valid);
      if (c.dropped) assert.deepEqual(parsed.dropped, c.dropped);
      if (c.ignored) assert.deepEqual(parsed.ignored, c.ignored);
      if (c.think !== undefined) assert.equal(parsed.think, c.think);
    });
  }

  test('the problem message names the valid actions', () => {
    assert.match(parseTurn('<answer>Jump</answer>', VOCAB, 5).problem ?? '', /Left, Down, Right, Up/);
    assert.match(parseTurn('nothing', VOCAB, 5).problem ?? '', /no <answer>/);
    assert.match(extractAnswer('<answer>x').ok ? '' : 'not closed', /not closed/);
  });

  test('never throws, whatever the text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.integer({ min: 1, max: 10 }), (text, limit) => {
        const parsed = parseTurn(text, VOCAB, limit);
        assert.ok(parsed.actions.length <= limit);
        assert.equal(parsed.valid, parsed.problem === null);
      }),
      { numRuns: 500 },
    );
  });

  test('formatReply and parseTurn round-trip (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...VOCAB), { minLength: 1, maxLength: 5 }), fc.option(fc.string().filter((s) => !/<\/?(think|answer)>/i.test(s))), (actions, think) => {
        const parsed = parseTurn(formatReply(actions, think ?? undefined), VOCAB, 5);
        assert.deepEqual(parsed.actions, actions);
        assert.equal(parsed.valid, true);
      }),
      { numRuns: 300 },
    );
  });
});
