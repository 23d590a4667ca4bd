// Unit: the shared tokenizer is lossless, deterministic, covers the built-in environments without byte
// fallback, and keeps grid cells and action words as single tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createEnv, envNames } from '../../envs/registry.js';
import { SpecialToken, trajflowTokenizer, WordTokenizer } from '../../tokenizer/index.js';

const tokenizer = trajflowTokenizer();

test('decode(tokenize(text)) gives any text back', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (text) => tokenizer.decode(tokenizer.tokenize(text)) === text));
});

test('grid rows are one token per cell, action words one token each', () => {
  const ids = tokenizer.tokenize('OOGP\n#_X_#');
  assert.equal(ids.length, 10);
  for (const word of ['Left', 'Down', 'Right', 'Up', 'Dragon', 'Phoenix']) {
    assert.notEqual(tokenizer.singleTokenId(word), undefined, word);
  }
  assert.equal(tokenizer.singleTokenId('Left Up'), undefined);
});

test('the built-in environments need no byte fallback', () => {
  for (const name of envNames) {
    const env = createEnv(name);
    for (let seed = 0; seed < 40; seed++) {
      const texts = [env.reset(seed).observation, env.systemPrompt(), ...env.validActions()];
      for (const text of texts) assert.deepEqual(tokenizer.fallbackPieces(text), [], `${name} seed ${seed}`);
    }
  }
});

test('an unknown word falls back to its bytes; specials decode only on request', () => {
  assert.deepEqual(tokenizer.fallbackPieces(' Zebra'), [' Zebra']);
  assert.equal(tokenizer.tokenize(' Zebra').length, 6);
  assert.equal(tokenizer.decode([SpecialToken.OBS, ...tokenizer.tokenize('Up'), SpecialToken.EOS]), 'Up');
  assert.equal(tokenizer.decode([SpecialToken.OBS, SpecialToken.EOS], true), '<obs><eos>');
  assert.throws(() => tokenizer.decode([tokenizer.vocabSize]), /outside the vocabulary/);
});

test('two instances give the same ids (no state)', () => {
  const other = new WordTokenizer();
  const text = 'You are playing a bandit game. Choose between Dragon and Phoenix';
  assert.deepEqual(other.tokenize(text), tokenizer.tokenize(text));
  assert.ok(tokenizer.tokenize(text).length < 20);
});
