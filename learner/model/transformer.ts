// The policy network: a GPT-style decoder-only transformer (pre-norm blocks of causal self-attention
// and a GELU MLP, learned positions, an untied output head). `logits` is differentiable with respect to
// the parameters; the sampler and the learner both call it, so sampling and training see one model.
import * as tf from '@tensorflow/tfjs-core';
import { GRID_EMBEDDINGS, GRID_NEIGHBOURS, type PolicyModelConfig } from './config.js';
import { initialValues, parameterSpecs } from './init.js';
import { BYTE_OFFSET, SpecialToken } from '../../tokenizer/word-pieces.js';
import { dense, embed, gelu, layerNorm } from './ops.js';

export class TransformerModel {
  readonly config: PolicyModelConfig;
  /** Parameters by name, in parameterSpecs order. */
  readonly parameters: ReadonlyMap<string, tf.Variable>;
  private readonly causalBias = new Map<number, { from: number; to: number; bias: tf.Tensor2D }[]>();

  constructor(config: PolicyModelConfig, values: Map<string, Float32Array> = initialValues(config)) {
    this.config = config;
    const parameters = new Map<string, tf.Variable>();
    for (const spec of parameterSpecs(config)) {
      const data = values.get(spec.name);
      const size = spec.shape.reduce((a, b) => a * b, 1);
      if (!data || data.length !== size) throw new RangeError(`parameter ${spec.name}: expected ${size} values, got ${data?.length ?? 'none'}`);
      // The variable shares the tensor's data; the tensor itself is disposed, or every disposed model would
      // leave one tensor per parameter behind.
      const initial = tf.tensor(data, [...spec.shape], 'float32');
      parameters.set(spec.name, tf.variable(initial, true, `${spec.name}_${nextId++}`));
      initial.dispose();
    }
    this.parameters = parameters;
  }

  /** The trainable variables, for optimizers and gradient functions. */
  variables(): tf.Variable[] {
    return [...this.parameters.values()];
  }

  /** Current values of every parameter (for checkpoints and for copying a model). */
  async values(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const [name, variable] of this.parameters) out.set(name, (await variable.data()) as Float32Array);
    return out;
  }

  /** Overwrites the parameters with `values` (a loaded checkpoint). */
  assign(values: Map<string, Float32Array>): void {
    for (const [name, variable] of this.parameters) {
      const data = values.get(name);
      if (!data || data.length !== variable.size) throw new RangeError(`parameter ${name}: expected ${variable.size} values, got ${data?.length ?? 'none'}`);
      tf.tidy(() => variable.assign(tf.tensor(data, variable.shape, 'float32')));
    }
  }

  /**
   * Next-token logits for every position: ids [batch, time] (int32, time ≤ contextLength) → [batch, time, vocab].
   * Position t sees ids[0..t] only. Right padding is harmless: padded positions come after the real ones.
   * With `reply`, the logits cover only the reply vocabulary ([batch, time, reply.size]): the policy's
   * constrained decoding, used identically by the sampler and the learner.
   */
  logits(ids: tf.Tensor2D, reply?: ReplyHead): tf.Tensor3D {
    return this.forward(ids, reply).logits;
  }

  /** The logits and the value head's output at every position ([batch, time]); the model must have valueHead. */
  logitsAndValues(ids: tf.Tensor2D, reply?: ReplyHead): { logits: tf.Tensor3D; values: tf.Tensor2D } {
    if (!this.config.valueHead) throw new RangeError('logitsAndValues needs a model built with valueHead: true');
    const { logits, hidden } = this.forward(ids, reply);
    const p = (name: string) => this.parameters.get(name)! as tf.Tensor as tf.Tensor2D & tf.Tensor1D;
    const [batch, time] = ids.shape;
    return { logits, values: tf.reshape(dense(hidden, p('value/kernel'), p('value/bias')), [batch, time]) };
  }

  /** The final layer-normed hidden states ([batch·time, width]) and the logits read from them. */
  private forward(ids: tf.Tensor2D, reply?: ReplyHead): { logits: tf.Tensor3D; hidden: tf.Tensor2D } {
    const [batch, time] = ids.shape;
    const c = this.config;
    if (time > c.contextLength) throw new RangeError(`${time} positions exceed the model's contextLength ${c.contextLength}`);
    const tokens = embed(this.param('embed/tokens'), tf.reshape(ids, [-1]));
    const eosColumn = reply && c.nonEmptyReplies ? reply.indexOf(SpecialToken.EOS) : undefined;
    const idData = c.positionMode !== 'absolute' || c.attentionSpan === 'turn' || eosColumn !== undefined ? (ids.dataSync() as Int32Array) : undefined;
    // Within-turn attention: one [batch, 1, time, time] bias, shared by the layers and heads.
    const turnBias = c.attentionSpan === 'turn' ? tf.tensor4d(turnAttentionBias(idData!, batch, time), [batch, 1, time, time]) : undefined;
    let x = this.withPositions(tokens, idData, batch, time);
    for (let l = 0; l < c.layers; l++) x = this.block(`block${l}`, x, turnBias, batch, time);
    const out = layerNorm(x, this.param('final_ln/gain'), this.param('final_ln/bias'));
    return { logits: this.head(out, reply, eosColumn, idData, batch, time), hidden: out };
  }

  /** A parameter by name, typed for the ops that take it. */
  private param(name: string): tf.Tensor2D & tf.Tensor1D {
    return this.parameters.get(name)! as tf.Tensor as tf.Tensor2D & tf.Tensor1D;
  }

  /** The token embeddings ([batch·time, width]) plus the position embeddings of the config's positionMode. */
  private withPositions(tokens: tf.Tensor2D, idData: Int32Array | undefined, batch: number, time: number): tf.Tensor2D {
    const c = this.config;
    const d = c.width;
    const p = (name: string) => this.param(name);
    let x: tf.Tensor2D;
    if (c.positionMode === 'turn' || c.positionMode === 'grid') {
      const positionIds = tf.tensor1d(turnPositions(idData!, batch, time, c.contextLength), 'int32');
      x = tf.add(tokens, embed(p('embed/positions'), positionIds));
      if (c.positionMode === 'grid') {
        const { rows, columns } = gridPositions(idData!, batch, time);
        x = tf.add(x, tf.add(embed(p('embed/rows'), tf.tensor1d(rows, 'int32')), embed(p('embed/columns'), tf.tensor1d(columns, 'int32'))));
        if (c.gridNeighbours) {
          const neighbours = gridNeighbourIds(idData!, batch, time, rows, columns);
          GRID_NEIGHBOURS.forEach((direction, i) => {
            x = tf.add(x, embed(p(`embed/neighbour/${direction}`), tf.tensor1d(neighbours[i]!, 'int32')));
          });
        }
      }
    } else {
      const positions = tf.slice(p('embed/positions') as tf.Tensor2D, [0, 0], [time, d]);
      x = tf.reshape(tf.add(tf.reshape(tokens, [batch, time, d]), positions), [batch * time, d]) as tf.Tensor2D;
    }
    return x;
  }

  /** One pre-norm block `b` (e.g. "block0"): x + attention(ln1(x)), then + mlp(ln2(·)). */
  private block(b: string, input: tf.Tensor2D, turnBias: tf.Tensor4D | undefined, batch: number, time: number): tf.Tensor2D {
    const d = this.config.width;
    const heads = this.config.heads;
    const headWidth = d / heads;
    const p = (name: string) => this.param(name);
    let x = input;
    const h = layerNorm(x, p(`${b}/ln1/gain`), p(`${b}/ln1/bias`));
    // q, k, v from column blocks of the fused kernel (slicing the small kernel is cheap; slicing the
    // [batch·time, 3d] product or transposing it as 5-D is not on WASM), each → [batch, heads, time, headWidth].
    const [q, k, v] = [0, 1, 2].map((part) => {
      const kernel = tf.slice(p(`${b}/attn/qkv/kernel`) as tf.Tensor2D, [0, part * d], [d, d]);
      const projected = dense(h, kernel, tf.slice(p(`${b}/attn/qkv/bias`) as tf.Tensor1D, [part * d], [d]));
      return tf.transpose(tf.reshape(projected, [batch, time, heads, headWidth]), [0, 2, 1, 3]) as tf.Tensor4D;
    });
    const scaled = tf.mul(q!, 1 / Math.sqrt(headWidth)) as tf.Tensor4D;
    const attended = turnBias ? tf.matMul(tf.softmax(tf.add(tf.matMul(scaled, k!, false, true), turnBias)), v!) : this.causalAttention(scaled, k!, v!);
    const merged = tf.reshape(tf.transpose(attended, [0, 2, 1, 3]), [batch * time, d]) as tf.Tensor2D;
    x = tf.add(x, dense(merged, p(`${b}/attn/out/kernel`), p(`${b}/attn/out/bias`)));
    const m = layerNorm(x, p(`${b}/ln2/gain`), p(`${b}/ln2/bias`));
    return tf.add(x, dense(gelu(dense(m, p(`${b}/mlp/in/kernel`), p(`${b}/mlp/in/bias`))), p(`${b}/mlp/out/kernel`), p(`${b}/mlp/out/bias`)));
  }

  /** The logits [batch, time, vocab] read from the final hidden states, or over the reply vocabulary only with `reply`. */
  private head(out: tf.Tensor2D, reply: ReplyHead | undefined, eosColumn: number | undefined, idData: Int32Array | undefined, batch: number, time: number): tf.Tensor3D {
    const c = this.config;
    const p = (name: string) => this.param(name);
    if (!reply) return tf.reshape(dense(out, p('head/kernel'), p('head/bias')), [batch, time, c.vocabSize]);
    // Only the reply vocabulary's columns of the head: a constant selection product keeps the gradient on
    // the plain-matMul path (no gather gradient on WASM).
    const kernel = tf.matMul(p('head/kernel') as tf.Tensor2D, reply.selection);
    const headBias = tf.matMul(tf.reshape(p('head/bias'), [1, c.vocabSize]), reply.selection);
    let replyLogits = dense(out, kernel as tf.Tensor2D, tf.reshape(headBias, [-1]) as tf.Tensor1D);
    if (eosColumn !== undefined) {
      // No EOS right after ACT: a constant additive mask, so the gradient is untouched.
      const mask = new Float32Array(batch * time * reply.size);
      for (let i = 0; i < batch * time; i++) if (idData![i] === SpecialToken.ACT) mask[i * reply.size + eosColumn] = -1e9;
      replyLogits = tf.add(replyLogits, tf.tensor2d(mask, [batch * time, reply.size]));
    }
    return tf.reshape(replyLogits, [batch, time, reply.size]);
  }

  /** Frees the parameters and cached masks. */
  dispose(): void {
    for (const variable of this.parameters.values()) variable.dispose();
    for (const blocks of this.causalBias.values()) for (const block of blocks) block.bias.dispose();
    this.causalBias.clear();
  }

  /**
   * softmax(q·kᵀ + causal mask)·v for q (already scaled), k, v [batch, heads, time, headWidth], by blocks of
   * query positions: block [from, to) scores only the keys 0..to−1, since later keys get weight exactly 0
   * (exp(−1e9) underflows). With up to 4 blocks this skips up to 3/8 of the attention products, which
   * WASM runs on its slow batched-matMul path; the result is the same up to float rounding.
   */
  private causalAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D): tf.Tensor4D {
    const [batch, heads, time, width] = q.shape;
    const blocks = this.blocksFor(time);
    if (blocks.length === 1) return tf.matMul(tf.softmax(tf.add(tf.matMul(q, k, false, true), blocks[0]!.bias)), v);
    const outputs = blocks.map(({ from, to, bias }) => {
      // (Slicing copies its whole input on WASM: the last block uses k and v as they are.)
      const rows = tf.slice(q, [0, 0, from, 0], [batch, heads, to - from, width]);
      const keys = to === time ? k : tf.slice(k, [0, 0, 0, 0], [batch, heads, to, width]);
      const values = to === time ? v : tf.slice(v, [0, 0, 0, 0], [batch, heads, to, width]);
      return tf.matMul(tf.softmax(tf.add(tf.matMul(rows, keys, false, true), bias)), values);
    });
    return tf.concat(outputs, 2) as tf.Tensor4D;
  }

  /** Query blocks of ≥ 32 positions (at most 4) with their causal bias [to − from, to]: −1e9 where key > query. Cached per length. */
  private blocksFor(time: number): { from: number; to: number; bias: tf.Tensor2D }[] {
    let blocks = this.causalBias.get(time);
    if (!blocks) {
      const count = Math.max(1, Math.min(4, Math.floor(time / 32)));
      blocks = Array.from({ length: count }, (_, i) => {
        const from = Math.round((i * time) / count);
        const to = Math.round(((i + 1) * time) / count);
        const data = new Float32Array((to - from) * to);
        for (let r = from; r < to; r++) for (let j = r + 1; j < to; j++) data[(r - from) * to + j] = -1e9;
        return { from, to, bias: tf.keep(tf.tensor2d(data, [to - from, to])) };
      });
      this.causalBias.set(time, blocks);
    }
    return blocks;
  }
}

let nextId = 0;

/**
 * Turn-relative positions: the count resets at every BOS/OBS token, so a cell of the current observation
 * (a grid square, say) gets the same position id on turn 1 and on turn 7. With absolute positions the
 * same map square moves further right every turn and the model must relearn the grid at every offset.
 */
export function turnPositions(ids: ArrayLike<number>, batch: number, time: number, contextLength: number): Int32Array {
  const out = new Int32Array(batch * time);
  for (let r = 0; r < batch; r++) {
    let position = 0;
    for (let t = 0; t < time; t++) {
      const id = ids[r * time + t]!;
      if (id === SpecialToken.OBS || id === SpecialToken.BOS) position = 0;
      out[r * time + t] = Math.min(position, contextLength - 1);
      position++;
    }
  }
  return out;
}

/** The newline token ('\n', a byte id): it ends a row of a text grid. */
const NEWLINE = BYTE_OFFSET + 10;

/**
 * Row and column of every token inside its turn (for positionMode 'grid'): both restart at each BOS/OBS
 * (which gets row 0, column 0), a newline moves to the next row, and the first token after it is column 0.
 * Capped at GRID_EMBEDDINGS − 1.
 */
export function gridPositions(ids: ArrayLike<number>, batch: number, time: number): { rows: Int32Array; columns: Int32Array } {
  const rows = new Int32Array(batch * time);
  const columns = new Int32Array(batch * time);
  const cap = GRID_EMBEDDINGS - 1;
  for (let r = 0; r < batch; r++) {
    let row = 0;
    let column = 0;
    for (let t = 0; t < time; t++) {
      const id = ids[r * time + t]!;
      if (id === SpecialToken.OBS || id === SpecialToken.BOS) {
        row = 0;
        column = 0;
        rows[r * time + t] = 0;
        columns[r * time + t] = 0;
        continue;
      }
      rows[r * time + t] = Math.min(row, cap);
      columns[r * time + t] = Math.min(column, cap);
      if (id === NEWLINE) {
        row++;
        column = 0;
      } else column++;
    }
  }
  return { rows, columns };
}

/**
 * For gridNeighbours: per direction (GRID_NEIGHBOURS order), the id of the cell above, below, left and right
 * of every token, or PAD. Cells are the observation's non-special, non-newline tokens between a turn's
 * BOS/OBS and its ACT, at their gridPositions (inside the embedded range); every other token, and a cell
 * whose neighbour is not a cell of the same observation, gets PAD. A cell sees cells that come after it (the
 * one below, the one right of it), but only observation positions do, and those are never scored: the whole
 * observation is known before the first reply token, so sampler and learner see the same features.
 */
export function gridNeighbourIds(ids: ArrayLike<number>, batch: number, time: number, rows: Int32Array, columns: Int32Array): Int32Array[] {
  const out = GRID_NEIGHBOURS.map(() => new Int32Array(batch * time)); // PAD is 0
  const cap = GRID_EMBEDDINGS - 1;
  const cellAt = new Int32Array(GRID_EMBEDDINGS * GRID_EMBEDDINGS);
  const isCell = (id: number) => id >= BYTE_OFFSET && id !== NEWLINE;
  for (let r = 0; r < batch; r++) {
    let t = 0;
    while (t < time) {
      const id = ids[r * time + t]!;
      if (id !== SpecialToken.OBS && id !== SpecialToken.BOS) {
        t++;
        continue;
      }
      // One observation: [t + 1, end) up to its ACT (or the next BOS/OBS, or the row's end).
      let end = t + 1;
      while (end < time) {
        const next = ids[r * time + end]!;
        if (next === SpecialToken.ACT || next === SpecialToken.OBS || next === SpecialToken.BOS) break;
        end++;
      }
      cellAt.fill(0);
      for (let u = t + 1; u < end; u++) {
        const row = rows[r * time + u]!;
        const column = columns[r * time + u]!;
        if (isCell(ids[r * time + u]!) && row < cap && column < cap) cellAt[row * GRID_EMBEDDINGS + column] = ids[r * time + u]!;
      }
      for (let u = t + 1; u < end; u++) {
        const row = rows[r * time + u]!;
        const column = columns[r * time + u]!;
        if (!isCell(ids[r * time + u]!) || row >= cap || column >= cap) continue;
        const at = r * time + u;
        if (row > 0) out[0]![at] = cellAt[(row - 1) * GRID_EMBEDDINGS + column]!;
        out[1]![at] = cellAt[(row + 1) * GRID_EMBEDDINGS + column]!;
        if (column > 0) out[2]![at] = cellAt[row * GRID_EMBEDDINGS + column - 1]!;
        out[3]![at] = cellAt[row * GRID_EMBEDDINGS + column + 1]!;
      }
      t = end;
    }
  }
  return out;
}

/** The index where the last turn of `context` starts (its last BOS/OBS; 0 if none): with attentionSpan 'turn' nothing before it is seen. */
export function currentTurnStart(context: ArrayLike<number>): number {
  for (let t = context.length - 1; t >= 0; t--) {
    const id = context[t]!;
    if (id === SpecialToken.OBS || id === SpecialToken.BOS) return t;
  }
  return 0;
}

/**
 * The part of `context` the policy reads: with attentionSpan 'turn' its last turn only (the tokens before are masked
 * out and positions restart at the turn's OBS, so leaving them out gives the same logits at a fraction of the cost).
 */
export function visibleContext(context: readonly number[], attentionSpan: PolicyModelConfig['attentionSpan']): readonly number[] {
  return attentionSpan === 'turn' ? context.slice(currentTurnStart(context)) : context;
}

/**
 * The additive attention bias of attentionSpan 'turn', [batch·time·time]: 0 where key ≤ query and both are
 * in the same turn (a BOS/OBS token opens a turn), −1e9 elsewhere.
 */
export function turnAttentionBias(ids: ArrayLike<number>, batch: number, time: number): Float32Array {
  const out = new Float32Array(batch * time * time).fill(-1e9);
  for (let r = 0; r < batch; r++) {
    let start = 0;
    for (let q = 0; q < time; q++) {
      const id = ids[r * time + q]!;
      if (id === SpecialToken.OBS || id === SpecialToken.BOS) start = q;
      out.fill(0, (r * time + q) * time + start, (r * time + q) * time + q + 1);
    }
  }
  return out;
}

/** The head restricted to some token ids: selection [vocab, size] has a 1 at (ids[j], j). */
export class ReplyHead {
  readonly size: number;
  readonly selection: tf.Tensor2D;
  private readonly index: Map<number, number>;

  constructor(
    readonly tokenIds: readonly number[],
    vocabSize: number,
  ) {
    if (tokenIds.length === 0 || new Set(tokenIds).size !== tokenIds.length) throw new RangeError('reply token ids must be distinct and non-empty');
    const data = new Float32Array(vocabSize * tokenIds.length);
    tokenIds.forEach((id, j) => {
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw new RangeError(`reply token id ${id} is outside the vocabulary of ${vocabSize}`);
      data[id * tokenIds.length + j] = 1;
    });
    this.size = tokenIds.length;
    this.selection = tf.keep(tf.tensor2d(data, [vocabSize, tokenIds.length]));
    this.index = new Map(tokenIds.map((id, j) => [id, j]));
  }

  /** Position of a token id in the reply vocabulary, or undefined. */
  indexOf(id: number): number | undefined {
    return this.index.get(id);
  }

  dispose(): void {
    this.selection.dispose();
  }
}
