// attentionSpan 'turn': a token attends only to its own turn (from the turn's BOS/OBS on), so the logits of a turn inside a whole episode equal the logits of that turn alone; splitTurnRows cuts a batch into one row per scored turn without changing any token's log-prob. Also positionMode 'grid' (row/column embeddings) and nonEmptyReplies (no EOS right after ACT).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { buildModelConfig, GRID_EMBEDDINGS, GRID_NEIGHBOURS, parameterCount } from '../../../learner/model/config.js';
import { initialValues } from '../../../learner/model/init.js';
import { currentTurnStart, gridNeighbourIds, gridPositions, ReplyHead, TransformerModel, turnAttentionBias } from '../../../learner/model/transformer.js';
import { SpecialToken } from '../../../tokenizer/index.js';
import { buildBatch, splitTurnRows, type TrainingBatch } from '../../../learner/train/batch.js';
import { createPolicyBundle, disposeBundle, policyOf } from '../../../learner/policy/bundle.js';
import { contextIds } from '../../../learner/policy/context.js';
import { formatReply } from '../../../envs/actions.js';
import { createEnv } from '../../../envs/registry.js';
import type { HistoryEntry, PolicyRequest } from '../../../envs/policy/policy.js';
import type { TrainingSampleEvent } from '../../../schemas/index.js';
import { Rng } from '../../../core/rng.js';

await selectBackend('wasm');

const config = buildModelConfig({ vocabSize: 40, contextLength: 64, width: 32, heads: 4, layers: 2, seed: 5, attentionSpan: 'turn' });
const values = initialValues(config);
for (const [name, data] of values) if (!name.includes('ln')) for (let i = 0; i < data.length; i++) data[i]! *= 20;
const model = new TransformerModel(config, values);

/** An episode of `turns` turns: [BOS] OBS x… ACT a, with ids ≥ 5 for observation and action tokens. */
function episode(turns: number, seed: number): number[] {
  const rng = new Rng(seed);
  const ids: number[] = [SpecialToken.BOS];
  for (let t = 0; t < turns; t++) {
    ids.push(SpecialToken.OBS);
    const length = 3 + Math.floor(rng.next() * 6);
    for (let i = 0; i < length; i++) ids.push(5 + Math.floor(rng.next() * 35));
    ids.push(SpecialToken.ACT, 5 + Math.floor(rng.next() * 4));
  }
  return ids;
}

function logits(rows: number[][]): Float32Array {
  const time = Math.max(...rows.map((r) => r.length));
  const padded = rows.map((r) => [...r, ...new Array(time - r.length).fill(SpecialToken.PAD)]);
  return tf.tidy(() => model.logits(tf.tensor2d(padded, undefined, 'int32')).dataSync() as Float32Array);
}

test('turnAttentionBias: keys ≤ query in the same turn only', () => {
  const ids = [SpecialToken.BOS, SpecialToken.OBS, 9, SpecialToken.ACT, SpecialToken.OBS, 9];
  const bias = turnAttentionBias(ids, 1, 6);
  const open = (q: number) => [...bias.subarray(q * 6, q * 6 + 6)].map((v, k) => (v === 0 ? k : -1)).filter((k) => k >= 0);
  assert.deepEqual(open(0), [0]);
  assert.deepEqual(open(1), [1]);
  assert.deepEqual(open(3), [1, 2, 3]);
  assert.deepEqual(open(4), [4]);
  assert.deepEqual(open(5), [4, 5]);
  assert.equal(currentTurnStart(ids), 4);
  assert.equal(currentTurnStart([SpecialToken.BOS, SpecialToken.OBS, 7]), 1);
});

test("a turn's logits inside the episode equal the turn's logits alone", () => {
  const ids = episode(4, 1);
  const full = logits([ids]);
  const v = config.vocabSize;
  let worst = 0;
  let largest = 0;
  for (let at = 0; at < ids.length; ) {
    const start = at;
    at++;
    while (at < ids.length && ids[at] !== SpecialToken.OBS) at++;
    const alone = logits([ids.slice(start, at)]);
    for (let t = 0; t < at - start; t++) {
      for (let j = 0; j < v; j++) {
        const expected = alone[t * v + j]!;
        worst = Math.max(worst, Math.abs(full[(start + t) * v + j]! - expected));
        largest = Math.max(largest, Math.abs(expected));
      }
    }
  }
  assert.ok(largest > 0.5, `logits too small to test (${largest})`);
  assert.ok(worst <= 1e-4 * Math.max(1, largest), `largest difference ${worst}`);
});

test('splitTurnRows keeps every scored token with its context and log-prob', () => {
  const episodes = [episode(3, 2), episode(5, 3)];
  const time = Math.max(...episodes.map((e) => e.length)) - 1;
  const rows = episodes.length;
  const ids = new Int32Array(rows * time);
  const targets = new Int32Array(rows * time);
  const mask = new Float32Array(rows * time);
  const advantages = new Float32Array(rows * time);
  const behaviourLogProbs = new Float32Array(rows * time);
  let lossTokens = 0;
  episodes.forEach((e, r) => {
    for (let t = 0; t < e.length - 1; t++) {
      ids[r * time + t] = e[t]!;
      if (e[t] === SpecialToken.ACT) {
        targets[r * time + t] = e[t + 1]! - 5;
        mask[r * time + t] = 1;
        advantages[r * time + t] = r + t / 100;
        behaviourLogProbs[r * time + t] = -t / 10;
        lossTokens++;
      }
    }
  });
  const batch: TrainingBatch = {
    samples: [],
    rows,
    time,
    ids,
    targets,
    mask,
    advantages,
    behaviourLogProbs,
    episodeReward: new Float32Array(rows * time),
    turnsLeft: new Float32Array(rows * time),
    lossTokens,
    tokens: 0,
    skipped: [],
  };
  const split = splitTurnRows(batch);
  assert.equal(split.rows, 3 + 5);
  assert.equal(split.lossTokens, lossTokens);
  assert.ok(split.time < time);
  const sum = (a: Float32Array) => a.reduce((s, x) => s + x, 0);
  assert.equal(sum(split.mask), lossTokens);
  assert.ok(Math.abs(sum(split.advantages) - sum(advantages)) < 1e-4);
  assert.ok(Math.abs(sum(split.behaviourLogProbs) - sum(behaviourLogProbs)) < 1e-4);
  for (let r = 0; r < split.rows; r++) assert.equal(split.ids[r * split.time], SpecialToken.OBS);
  // Reply-head log-probs of the scored tokens: the same on the split rows as on the whole episodes.
  const head = new ReplyHead([5, 6, 7, 8], config.vocabSize);
  const scored = (b: TrainingBatch) =>
    tf.tidy(() => {
      const lp = tf.logSoftmax(model.logits(tf.tensor2d(b.ids, [b.rows, b.time], 'int32'), head));
      const flat = lp.dataSync();
      const out: number[] = [];
      for (let i = 0; i < b.rows * b.time; i++) if (b.mask[i] === 1) out.push(flat[i * 4 + b.targets[i]!]!);
      return out;
    });
  const a = scored(batch);
  const b = scored(split);
  assert.equal(a.length, b.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) < 1e-4, `token ${i}: ${x} vs ${b[i]}`));
  head.dispose();
});

test('gridPositions: rows count newlines, columns restart after each one and at every turn', () => {
  const nl = 15; // '\n' is byte 10 → id BYTE_OFFSET + 10
  const ids = [SpecialToken.BOS, SpecialToken.OBS, 20, 21, nl, 22, 23, SpecialToken.ACT, 9, SpecialToken.OBS, 20, nl, 21];
  const { rows, columns } = gridPositions(ids, 1, ids.length);
  assert.deepEqual([...rows], [0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1]);
  assert.deepEqual([...columns], [0, 0, 0, 1, 2, 0, 1, 2, 3, 0, 0, 1, 0]);
});

test("positionMode 'grid' adds row and column tables; a turn's logits still do not depend on earlier turns", () => {
  const grid = buildModelConfig({ vocabSize: 40, contextLength: 64, width: 32, heads: 4, layers: 1, seed: 6, attentionSpan: 'turn', positionMode: 'grid' });
  assert.equal(parameterCount(grid), parameterCount({ ...grid, positionMode: 'turn' }) + 2 * GRID_EMBEDDINGS * 32);
  const m = new TransformerModel(grid);
  const turn = [SpecialToken.OBS, 20, 21, 15, 22, 23, SpecialToken.ACT];
  const alone = tf.tidy(() => m.logits(tf.tensor2d([turn], undefined, 'int32')).dataSync() as Float32Array);
  const ids = [SpecialToken.BOS, SpecialToken.OBS, 30, 15, 31, SpecialToken.ACT, 7, ...turn];
  const full = tf.tidy(() => m.logits(tf.tensor2d([ids], undefined, 'int32')).dataSync() as Float32Array);
  const tail = full.subarray(full.length - alone.length);
  alone.forEach((x, i) => assert.ok(Math.abs(x - tail[i]!) < 1e-4));
  m.dispose();
});

test('gridNeighbourIds: the cells above, below, left and right of each observation cell, PAD elsewhere', () => {
  const nl = 15;
  const P = SpecialToken.PAD;
  // Turn 1 "ab\ncd" (a=20 b=21 c=22 d=23) then reply 9; turn 2 "e\nf" (e=24 f=25).
  const ids = [SpecialToken.BOS, SpecialToken.OBS, 20, 21, nl, 22, 23, SpecialToken.ACT, 9, SpecialToken.OBS, 24, nl, 25, SpecialToken.ACT];
  const { rows, columns } = gridPositions(ids, 1, ids.length);
  const [up, down, left, right] = gridNeighbourIds(ids, 1, ids.length, rows, columns).map((a) => [...a]);
  //           BOS OBS a   b   nl  c   d   ACT 9  OBS e   nl  f   ACT
  assert.deepEqual(up, [P, P, P, P, P, 20, 21, P, P, P, P, P, 24, P]);
  assert.deepEqual(down, [P, P, 22, 23, P, P, P, P, P, P, 25, P, P, P]);
  assert.deepEqual(left, [P, P, P, 20, P, P, 22, P, P, P, P, P, P, P]);
  assert.deepEqual(right, [P, P, 21, P, P, 23, P, P, P, P, P, P, P, P]);
});

test('gridNeighbours: four neighbour tables; the feature reaches a cell from the cell below it, never a reply token from a later one', () => {
  assert.throws(() => buildModelConfig({ vocabSize: 40, gridNeighbours: true }), /gridNeighbours needs positionMode 'grid'/);
  const c = buildModelConfig({ vocabSize: 40, contextLength: 64, width: 32, heads: 4, layers: 1, seed: 8, attentionSpan: 'turn', positionMode: 'grid', gridNeighbours: true });
  assert.equal(parameterCount(c), parameterCount({ ...c, gridNeighbours: false }) + GRID_NEIGHBOURS.length * 40 * 32);
  const values = initialValues(c);
  for (const [name, data] of values) if (!name.includes('ln')) for (let i = 0; i < data.length; i++) data[i]! *= 20;
  const m = new TransformerModel(c, values);
  const run = (ids: number[]) => tf.tidy(() => m.logits(tf.tensor2d([ids], undefined, 'int32')).dataSync() as Float32Array);
  const v = 40;
  const base = [SpecialToken.OBS, 20, 21, 15, 22, 23, SpecialToken.ACT, 7, 8];
  const at = (x: Float32Array, t: number) => [...x.subarray(t * v, (t + 1) * v)];
  const same = (a: number[], b: number[]) => a.every((x, i) => Math.abs(x - b[i]!) < 1e-4);
  // The cell below 'a' (index 4, 'c') changes what 'a' (index 1) sees: the stem looks down the grid.
  const below = run(base.map((id, t) => (t === 4 ? 30 : id)));
  assert.ok(!same(at(run(base), 1), at(below, 1)), "a cell's features include the cell below it");
  // Reply tokens are not cells: changing the second reply token leaves every earlier position's logits alone.
  const reply = run(base.map((id, t) => (t === 8 ? 9 : id)));
  for (let t = 0; t < 8; t++) assert.ok(same(at(run(base), t), at(reply, t)), `position ${t} must not see a later reply token`);
  m.dispose();
});

test('nonEmptyReplies: EOS gets no probability right after ACT, and only there', () => {
  const c = buildModelConfig({ vocabSize: 40, contextLength: 64, width: 32, heads: 4, layers: 1, seed: 7, nonEmptyReplies: true });
  const m = new TransformerModel(c);
  const head = new ReplyHead([SpecialToken.EOS, 5, 6], c.vocabSize);
  const ids = [SpecialToken.BOS, SpecialToken.OBS, 20, SpecialToken.ACT, 5];
  const probs = tf.tidy(() => tf.softmax(m.logits(tf.tensor2d([ids], undefined, 'int32'), head)).dataSync() as Float32Array);
  assert.equal(probs[3 * 3 + 0], 0);
  assert.ok(Math.abs(probs[3 * 3 + 1]! + probs[3 * 3 + 2]! - 1) < 1e-6);
  assert.ok(probs[4 * 3 + 0]! > 0.1);
  head.dispose();
  m.dispose();
});

for (const gridNeighbours of [false, true])
  test(`sampler (current turn only) and learner (one row per turn) agree on log-probs with the grid policy${gridNeighbours ? ' and its neighbour stem' : ''}`, () => {
    const bundle = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], {
      width: 32,
      layers: 2,
      heads: 4,
      seed: 4,
      attentionSpan: 'turn',
      positionMode: 'grid',
      nonEmptyReplies: true,
      gridNeighbours,
    });
    const requests: PolicyRequest[] = Array.from({ length: 6 }, (_, i) => {
      const env = createEnv('FrozenLake', { slippery: false, maxActionsPerTurn: 2, maxTurns: 10, maxActionsPerEpisode: 20 });
      let observation = env.reset(700 + i).observation;
      const history: HistoryEntry[] = [];
      for (let turn = 0; turn < i % 4; turn++) {
        const text = formatReply([['Left'], ['Down', 'Right'], ['Up']][(i + turn) % 3]!);
        const result = env.step(text);
        history.push({ role: 'observation', text: observation }, { role: 'action', text });
        observation = result.observation;
        if (result.terminated || result.truncated) break;
      }
      return { systemPrompt: '', history, observation, seed: 40 + i, actionSpace: { validActions: [...env.validActions()], maxActionsPerTurn: 2 } };
    });
    const replies = policyOf(bundle, 0, {}).actBatch(requests);
    replies.forEach((reply) => assert.ok(reply.tokenIds[0] !== SpecialToken.EOS, 'a reply never starts with EOS'));
    const samples: TrainingSampleEvent[] = requests.map((request, i) => {
      const context = contextIds(bundle.tokenizer, bundle.vocabulary, request.history, request.observation, 2).context;
      const tokenIds = [...context, ...replies[i]!.tokenIds];
      const lossMask = tokenIds.map((_, t) => (t >= context.length ? 1 : 0));
      return {
        sampleId: `s${i}`,
        runId: 'r',
        groupId: 'g',
        episodeId: `e${i}`,
        policyVersion: 0,
        tokenIds,
        lossMask,
        advantages: lossMask.map(() => 0),
        behaviourLogProbs: lossMask.map((m, t) => (m ? replies[i]!.logProbs[t - context.length]! : 0)),
        reward: 0,
        estimator: 'grpo',
        groupSize: 1,
        groupRewardMean: 0,
        groupRewardStd: 0,
        stepAdvantages: null,
        eventTimeMs: 0,
        batch: null,
      };
    });
    const batch = splitTurnRows(buildBatch(samples, bundle.head, bundle.model.config.contextLength));
    assert.equal(batch.rows, samples.length, 'only the last turn of each sample is scored');
    const logp = tf.tidy(() => tf.logSoftmax(bundle.model.logits(tf.tensor2d(batch.ids, [batch.rows, batch.time], 'int32'), bundle.head)).dataSync() as Float32Array);
    let compared = 0;
    batch.mask.forEach((m, t) => {
      if (m !== 1) return;
      assert.ok(Math.abs(logp[t * bundle.head.size + batch.targets[t]!]! - batch.behaviourLogProbs[t]!) < 1e-4);
      compared++;
    });
    assert.equal(compared, batch.lossTokens);
    disposeBundle(bundle);
  });

test('turnRows: an episode longer than the context is trained on every turn (cutting the sample dropped its first turns)', () => {
  const head = new ReplyHead([SpecialToken.EOS, 5, 6, 7, 8], config.vocabSize);
  try {
    const ids = episode(12, 3); // 12 turns of 7–12 tokens: longer than contextLength 64
    assert.ok(ids.length > config.contextLength + 1, `${ids.length} tokens`);
    const lossMask = ids.map((_, t) => (t > 0 && ids[t - 1] === SpecialToken.ACT ? 1 : 0));
    const sample: TrainingSampleEvent = {
      sampleId: 's',
      runId: 'r',
      groupId: 'g',
      episodeId: 'e',
      policyVersion: 0,
      tokenIds: ids,
      lossMask,
      advantages: lossMask.map((m, t) => m * t),
      behaviourLogProbs: lossMask.map((m) => -m),
      reward: 0,
      estimator: 'grpo',
      groupSize: 1,
      groupRewardMean: 0,
      groupRewardStd: 0,
      stepAdvantages: null,
      eventTimeMs: 0,
      batch: null,
    };
    const cut = buildBatch([sample], head, config.contextLength);
    assert.ok(cut.lossTokens < 12, `the whole-sample cut keeps ${cut.lossTokens} of 12 turns`);
    const rows = splitTurnRows(buildBatch([sample], head, config.contextLength, { turnRows: true }), config.contextLength);
    assert.equal(rows.lossTokens, 12);
    assert.equal(rows.rows, 12);
    assert.ok(rows.time <= config.contextLength);
    // Every turn's action with its own advantage (the position of its token in the episode).
    const trained = [...rows.mask.keys()].filter((i) => rows.mask[i] === 1).map((i) => rows.advantages[i]);
    assert.deepEqual(
      trained,
      lossMask.flatMap((m, t) => (m ? [t] : [])),
    );
    // A turn longer than the context keeps its last contextLength positions, with its action.
    const long = [SpecialToken.BOS, SpecialToken.OBS, ...new Array(80).fill(9), SpecialToken.ACT, 6];
    const longMask = long.map((_, t) => (t === long.length - 1 ? 1 : 0));
    const one = splitTurnRows(
      buildBatch([{ ...sample, tokenIds: long, lossMask: longMask, advantages: longMask, behaviourLogProbs: longMask.map((m) => -m) }], head, config.contextLength, {
        turnRows: true,
      }),
      config.contextLength,
    );
    assert.deepEqual([one.rows, one.time, one.lossTokens], [1, config.contextLength, 1]);
  } finally {
    head.dispose();
  }
});
