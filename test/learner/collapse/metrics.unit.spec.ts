// Unit: RAGEN-2's template-collapse estimates on hand-computed matrices, and the pair choice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { choosePairs, generatedTurns, templateCollapseMetrics, templateMetricsEntries } from '../../../learner/collapse/index.js';

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

test('a 2×2 matrix by hand: entropies, MI, z-score, retrieval with a tie counted against it, per-token version', () => {
  // Reply 0 (2 tokens, own prompt 0) scores −1 / −3; reply 1 (1 token, own prompt 1) scores −2 under both.
  const m = templateCollapseMetrics({ scores: Float64Array.from([-1, -3, -2, -2]), rows: 2, columns: 2, own: [0, 1], replyTokens: [2, 1] });
  // marginal_0 = logsumexp(−1, −3) − ln 2 = −1.56622; marginal_1 = −2.
  close(m.conditionalEntropy, 1.5, 'H(Z|X)');
  close(m.marginalEntropy, 1.7831095847584864, 'H(Z)');
  close(m.mutualInformation, 0.28310958475848635, 'I(X;Z)');
  close(m.miUpperBound, Math.log(2), 'log N');
  close(m.miZScore, 1.2993209657463942, 'MI z-score');
  assert.equal(m.retrievalAccuracy, 0.5, 'the tie of reply 1 is not a retrieval');
  assert.equal(m.retrievalTop2, 1);
  assert.equal(m.chance, 0.5);
  assert.equal(m.aboveChance, 0);
  close(m.perToken.conditionalEntropy, 1.25, 'per-token H(Z|X)');
  close(m.perToken.marginalEntropy, 1.4399427465208612, 'per-token H(Z)');
  close(m.perToken.mutualInformation, 0.18994274652086118, 'per-token I');
  assert.equal(templateMetricsEntries(m)['template.retrievalAccuracy'], 0.5);
  assert.equal(Object.keys(templateMetricsEntries(m)).length, 14);
});

test('a template policy (replies scored alike under every prompt) has no MI and no retrieval; an input-bound one reaches log N', () => {
  const n = 4;
  const template = templateCollapseMetrics({ scores: new Float64Array(n * n).fill(-1.3), rows: n, columns: n, own: [0, 1, 2, 3], replyTokens: [1, 1, 1, 1] });
  close(template.mutualInformation, 0, 'template MI');
  assert.equal(template.retrievalAccuracy, 0);
  assert.equal(template.aboveChance, -0.25);
  const bound = new Float64Array(n * n).fill(-60);
  for (let i = 0; i < n; i++) bound[i * n + i] = 0;
  const dependent = templateCollapseMetrics({ scores: bound, rows: n, columns: n, own: [0, 1, 2, 3], replyTokens: [1, 1, 1, 1] });
  assert.ok(Math.abs(dependent.mutualInformation - Math.log(n)) < 1e-6);
  assert.equal(dependent.retrievalAccuracy, 1);
  assert.throws(() => templateCollapseMetrics({ scores: new Float64Array(3), rows: 2, columns: 2, own: [0, 1], replyTokens: [1, 1] }), /2×2 matrix with 3 values/);
});

test('turns are the runs of loss-mask 1; pairs are seeded, one per trajectory, identical prompts share a column', () => {
  assert.deepEqual(generatedTurns([0, 0, 1, 1, 0, 1, 0]), [
    [2, 4],
    [5, 6],
  ]);
  // Two trajectories with the same first observation (one group), a third with another.
  const a = { tokenIds: [9, 9, 4, 7, 8, 4, 6], lossMask: [0, 0, 0, 1, 0, 0, 1] };
  const b = { tokenIds: [9, 9, 4, 6, 8, 4, 7], lossMask: [0, 0, 0, 1, 0, 0, 1] };
  const c = { tokenIds: [5, 5, 4, 7], lossMask: [0, 0, 0, 1] };
  const first = choosePairs([a, b, c], 10, 7, 'first');
  assert.equal(first.replies.length, 3);
  assert.equal(first.prompts.length, 2, 'a and b share their first prompt');
  const ownOfA = first.prompts.findIndex((p) => p.join() === '9,9,4');
  assert.deepEqual(
    first.replies
      .filter((r) => r.own === ownOfA)
      .map((r) => r.tokens)
      .sort(),
    [[6], [7]],
  );
  assert.deepEqual(choosePairs([a, b, c], 10, 7), choosePairs([a, b, c], 10, 7), 'seeded');
  assert.equal(choosePairs([a, b, c], 2, 7).replies.length, 2, 'capped at the count');
  const draws = new Set(Array.from({ length: 40 }, (_, seed) => JSON.stringify(choosePairs([a], 1, seed).replies[0]!.tokens)));
  assert.deepEqual([...draws].sort(), ['[6]', '[7]'], 'uniform over turns reaches both turns of a');
  assert.equal(choosePairs([{ tokenIds: [4, 7], lossMask: [1, 1] }], 5, 1).replies.length, 0, 'a reply without a prompt is not scorable');
});
