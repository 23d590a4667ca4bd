// tokenText: decodes a sample's ids only when the episode's own observation ids decode back to its text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenText, withTokenText } from '../../api/token-text.js';
import { turnPromptIds } from '../../learner/policy/context.js';
import { SpecialToken, TOKENIZER_NAME, trajflowTokenizer } from '../../tokenizer/index.js';
import { byteTokenizer } from '../../tokenizer/contract.js';

const tokenizer = trajflowTokenizer();
const observation = 'Frozen lake:\nS F F G';
type Episode = Parameters<typeof tokenText>[0];

function episode(observationTokenIds: number[] | null, tokenIds: number[]): Episode {
  return {
    steps: [{ observation, observationTokenIds } as Episode['steps'][number]],
    sample: { tokens: { tokenIds, lossMask: tokenIds.map(() => 0), advantages: [], behaviourLogProbs: [] } } as unknown as Episode['sample'],
  };
}

test('ids made by trajflow’s tokenizer decode to one piece per id, specials named', () => {
  const prompt = turnPromptIds(tokenizer, observation, true);
  const ids = [...prompt, tokenizer.singleTokenId('Left')!, SpecialToken.EOS];
  const text = tokenText(episode(prompt, ids));
  assert.equal(text?.tokenizer, TOKENIZER_NAME);
  assert.equal(text?.pieces.length, ids.length);
  assert.deepEqual(text?.pieces.slice(0, 2), ['<bos>', '<obs>']);
  assert.deepEqual(text?.pieces.slice(-2), ['Left', '<eos>']);
  assert.equal(text?.pieces.filter((p) => !p.startsWith('<')).join(''), `${observation}Left`);
});

test('ids of another tokenizer, ids outside the vocabulary, or no observation ids: null (the page shows ids)', () => {
  const bytes = byteTokenizer.tokenize(observation);
  assert.equal(tokenText(episode(bytes, bytes)), null, 'the byte stand-in does not decode to the observation');
  assert.equal(tokenText(episode([31_999], [31_999])), null, 'outside the vocabulary');
  const prompt = turnPromptIds(tokenizer, observation, true);
  assert.equal(tokenText(episode(null, prompt)), null, 'nothing to check the ids against');
  assert.equal(tokenText({ steps: [], sample: null }), null);
  assert.deepEqual(withTokenText({ steps: [], sample: null }), { steps: [], sample: null, tokenText: null });
});
