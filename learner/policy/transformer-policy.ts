// The transformer behind the actors' Policy interface. act() calls that arrive together (the actors run
// many episodes at once) are answered as one batch: each generated token is one forward pass over the
// batch's contexts. Sampling is seeded per request (request.seed → Rng), so the same weights and the same
// request give the same reply; the recorded log-prob is that of the distribution sampled from
// (logits / temperature over the reply vocabulary), which is what the learner's ratio divides by.
import * as tf from '@tensorflow/tfjs-core';
import { Rng, RngStream } from '../../core/rng.js';
import type { Policy, PolicyReply, PolicyRequest } from '../../envs/policy/policy.js';
import { SpecialToken, type WordTokenizer } from '../../tokenizer/word-pieces.js';
import { visibleContext, type ReplyHead, type TransformerModel } from '../model/transformer.js';
import { contextIds } from './context.js';
import { replyText, type ReplyVocabulary } from './reply.js';

export interface TransformerPolicyOptions {
  readonly model: TransformerModel;
  readonly head: ReplyHead;
  readonly vocabulary: ReplyVocabulary;
  readonly tokenizer: WordTokenizer;
  readonly version: number;
  /** Sampling temperature (> 0); the learner divides its logits by the same value. Default 1. */
  readonly temperature?: number;
  /** Take the most likely token instead of sampling (evaluation). Default false. */
  readonly greedy?: boolean;
  /** Used when a request has no actionSpace. Default 1. */
  readonly maxActionsPerTurn?: number;
  /** At most this many contexts per forward pass (memory bound when many episodes act at once). Default: no cap. */
  readonly maxBatch?: number;
}

interface Pending {
  readonly request: PolicyRequest;
  readonly resolve: (reply: PolicyReply) => void;
  readonly reject: (error: unknown) => void;
}

export class TransformerPolicy implements Policy {
  readonly version: number;
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly options: TransformerPolicyOptions) {
    this.version = options.version;
  }

  act(request: PolicyRequest): Promise<PolicyReply> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Answers a batch of requests directly (what act() does for the calls that arrive together). */
  actBatch(requests: readonly PolicyRequest[]): PolicyReply[] {
    const { model, head, vocabulary, tokenizer } = this.options;
    const temperature = this.options.temperature ?? 1;
    const contextLength = model.config.contextLength;
    const rows = requests.map((request) => {
      const maxWords = request.actionSpace?.maxActionsPerTurn ?? this.options.maxActionsPerTurn ?? 1;
      const { context, prompt } = contextIds(tokenizer, vocabulary, request.history, request.observation, maxWords);
      return { context, prompt, maxWords, rng: new Rng(request.seed, RngStream.policy), ids: [] as number[], logProbs: [] as number[], done: false };
    });
    while (rows.some((row) => !row.done)) {
      const active = rows.filter((row) => !row.done);
      const windows = active.map((row) => visibleContext(row.context, model.config.attentionSpan).slice(-contextLength));
      const time = Math.max(...windows.map((w) => w.length));
      const logProbs = tf.tidy(() => {
        const padded = new Int32Array(active.length * time);
        windows.forEach((w, i) => padded.set(w, i * time));
        const logits = model.logits(tf.tensor2d(padded, [active.length, time], 'int32'), head);
        const flat = tf.reshape(logits, [active.length * time, head.size]);
        const last = tf.gather(
          flat,
          tf.tensor1d(
            windows.map((w, i) => i * time + w.length - 1),
            'int32',
          ),
        );
        return tf.logSoftmax(tf.div(last, temperature)).dataSync() as Float32Array;
      });
      active.forEach((row, i) => {
        const dist = logProbs.subarray(i * head.size, (i + 1) * head.size);
        const choice = this.options.greedy ? argmax(dist) : sample(dist, row.rng);
        const id = head.tokenIds[choice]!;
        row.ids.push(id);
        row.logProbs.push(Math.min(0, dist[choice]!));
        row.context.push(id);
        const words = row.ids.filter((t) => t !== SpecialToken.EOS).length;
        if (id === SpecialToken.EOS || words >= row.maxWords) row.done = true;
      });
    }
    return rows.map((row) => ({
      text: replyText(vocabulary, row.ids),
      tokenIds: row.ids,
      logProbs: row.logProbs,
      promptTokenIds: row.prompt,
    }));
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.queue;
    this.queue = [];
    const size = this.options.maxBatch ?? Math.max(1, pending.length);
    for (let i = 0; i < pending.length; i += size) {
      const chunk = pending.slice(i, i + size);
      try {
        const replies = this.actBatch(chunk.map((p) => p.request));
        chunk.forEach((p, j) => p.resolve(replies[j]!));
      } catch (error) {
        chunk.forEach((p) => p.reject(error));
      }
    }
  }
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** Inverse-CDF sampling from log-probs with the request's generator. */
function sample(logProbs: Float32Array, rng: Rng): number {
  const u = rng.next();
  let cumulative = 0;
  for (let i = 0; i < logProbs.length; i++) {
    cumulative += Math.exp(logProbs[i]!);
    if (u < cumulative) return i;
  }
  return logProbs.length - 1;
}
