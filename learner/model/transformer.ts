// The policy network: a GPT-style decoder-only transformer (pre-norm blocks of causal self-attention
// and a GELU MLP, learned positions, an untied output head). `logits` is differentiable with respect to
// the parameters; the sampler and the learner both call it, so sampling and training see one model.
import * as tf from '@tensorflow/tfjs-core';
import type { PolicyModelConfig } from './config.js';
import { initialValues, parameterSpecs } from './init.js';
import { dense, embed, gelu, layerNorm } from './ops.js';

export class TransformerModel {
  readonly config: PolicyModelConfig;
  /** Parameters by name, in parameterSpecs order. */
  readonly parameters: ReadonlyMap<string, tf.Variable>;
  private readonly causalBias = new Map<number, tf.Tensor2D>();

  constructor(config: PolicyModelConfig, values: Map<string, Float32Array> = initialValues(config)) {
    this.config = config;
    const parameters = new Map<string, tf.Variable>();
    for (const spec of parameterSpecs(config)) {
      const data = values.get(spec.name);
      const size = spec.shape.reduce((a, b) => a * b, 1);
      if (!data || data.length !== size) throw new RangeError(`parameter ${spec.name}: expected ${size} values, got ${data?.length ?? 'none'}`);
      parameters.set(spec.name, tf.variable(tf.tensor(data, [...spec.shape], 'float32'), true, `${spec.name}_${nextId++}`));
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
    const [batch, time] = ids.shape;
    const c = this.config;
    if (time > c.contextLength) throw new RangeError(`${time} positions exceed the model's contextLength ${c.contextLength}`);
    const d = c.width;
    const heads = c.heads;
    const headWidth = d / heads;
    const p = (name: string) => this.parameters.get(name)! as tf.Tensor as tf.Tensor2D & tf.Tensor1D;
    const positions = tf.slice(p('embed/positions') as tf.Tensor2D, [0, 0], [time, d]);
    let x = tf.reshape(tf.add(tf.reshape(embed(p('embed/tokens'), tf.reshape(ids, [-1])), [batch, time, d]), positions), [batch * time, d]) as tf.Tensor2D;
    const bias = this.maskFor(time);
    for (let l = 0; l < c.layers; l++) {
      const b = `block${l}`;
      const h = layerNorm(x, p(`${b}/ln1/gain`), p(`${b}/ln1/bias`));
      const qkv = dense(h, p(`${b}/attn/qkv/kernel`), p(`${b}/attn/qkv/bias`));
      // [batch·time, 3d] → three [batch, heads, time, headWidth]
      const split = tf.transpose(tf.reshape(qkv, [batch, time, 3, heads, headWidth]), [2, 0, 3, 1, 4]);
      const [q, k, v] = tf.unstack(split) as tf.Tensor4D[];
      const scores = tf.add(tf.mul(tf.matMul(q!, k!, false, true), 1 / Math.sqrt(headWidth)), bias);
      const attended = tf.matMul(tf.softmax(scores), v!);
      const merged = tf.reshape(tf.transpose(attended, [0, 2, 1, 3]), [batch * time, d]) as tf.Tensor2D;
      x = tf.add(x, dense(merged, p(`${b}/attn/out/kernel`), p(`${b}/attn/out/bias`)));
      const m = layerNorm(x, p(`${b}/ln2/gain`), p(`${b}/ln2/bias`));
      x = tf.add(x, dense(gelu(dense(m, p(`${b}/mlp/in/kernel`), p(`${b}/mlp/in/bias`))), p(`${b}/mlp/out/kernel`), p(`${b}/mlp/out/bias`)));
    }
    const out = layerNorm(x, p('final_ln/gain'), p('final_ln/bias'));
    if (!reply) return tf.reshape(dense(out, p('head/kernel'), p('head/bias')), [batch, time, c.vocabSize]);
    // Only the reply vocabulary's columns of the head: a constant selection product keeps the gradient on
    // the plain-matMul path (no gather gradient on WASM).
    const kernel = tf.matMul(p('head/kernel') as tf.Tensor2D, reply.selection);
    const headBias = tf.matMul(tf.reshape(p('head/bias'), [1, c.vocabSize]), reply.selection);
    return tf.reshape(dense(out, kernel as tf.Tensor2D, tf.reshape(headBias, [-1]) as tf.Tensor1D), [batch, time, reply.size]);
  }

  /** Frees the parameters and cached masks. */
  dispose(): void {
    for (const variable of this.parameters.values()) variable.dispose();
    for (const mask of this.causalBias.values()) mask.dispose();
    this.causalBias.clear();
  }

  /** −1e9 above the diagonal: position t cannot attend to t' > t. Cached per length (kept across tidy scopes). */
  private maskFor(time: number): tf.Tensor2D {
    let mask = this.causalBias.get(time);
    if (!mask) {
      const data = new Float32Array(time * time);
      for (let i = 0; i < time; i++) for (let j = i + 1; j < time; j++) data[i * time + j] = -1e9;
      mask = tf.keep(tf.tensor2d(data, [time, time]));
      this.causalBias.set(time, mask);
    }
    return mask;
  }
}

let nextId = 0;

/** The head restricted to some token ids: selection [vocab, size] has a 1 at (ids[j], j). */
export class ReplyHead {
  readonly size: number;
  readonly selection: tf.Tensor2D;
  private readonly index: Map<number, number>;

  constructor(readonly tokenIds: readonly number[], vocabSize: number) {
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
