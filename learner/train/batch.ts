// Training samples → the padded arrays one update works on. Position t of a row holds input token t and
// is scored on token t + 1 (next-token prediction), so masks, advantages and behaviour log-probs are
// shifted by one. A sample longer than the model's context keeps its last contextLength + 1 tokens (the
// sampler kept the last contextLength as well; the first positions of such a sample may then see a
// shorter context than they were sampled with — the importance ratio absorbs the difference). With
// `turnRows` (a trainer that trains one row per turn: PolicyTrainer.turnRows) samples are kept whole and
// each turn row is cut to the context instead, as the sampler cut the turn: cutting the sample dropped every
// turn before the last contextLength tokens from training (Sokoban's 10 turns of ≈ 47 tokens lost their first
// five, the ones whose anchor states the whole group shares).
import type { TrainingSampleEvent } from '../../schemas/index.js';
import { Rng } from '../../core/rng.js';
import type { ReplyHead } from '../model/transformer.js';
import { SpecialToken } from '../../tokenizer/word-pieces.js';

export interface TrainingBatch {
  readonly samples: readonly TrainingSampleEvent[];
  readonly rows: number;
  readonly time: number;
  /** [rows·time] input ids (PAD 0 after a row's end). */
  readonly ids: Int32Array;
  /** [rows·time] index in the reply vocabulary of the token scored at each position (0 where masked). */
  readonly targets: Int32Array;
  readonly mask: Float32Array;
  readonly advantages: Float32Array;
  readonly behaviourLogProbs: Float32Array;
  /**
   * The value head's regression target at each scored position: the episode's reward and the turns left after
   * this one (0 on the last turn), so that the return discounted by γ is reward·γ^turnsLeft.
   */
  readonly episodeReward: Float32Array;
  readonly turnsLeft: Float32Array;
  /** Tokens in the loss (Σ mask) and in the rows (Σ lengths). */
  readonly lossTokens: number;
  readonly tokens: number;
  /** Samples left out, with the reason. */
  readonly skipped: readonly { readonly sampleId: string; readonly reason: string }[];
}

/**
 * Rows in a canonical order whatever order the samples came in: by group id, then episode id, digits compared
 * as numbers ("g9" before "g10"). Kafka delivers a batch's samples in an order that depends on partitions and
 * timing, and minibatches are consecutive rows: without it the same batch would make a different update on
 * every run, and the streaming learner a different one from the in-process loop's.
 */
export function canonicalOrder(samples: readonly TrainingSampleEvent[]): TrainingSampleEvent[] {
  return [...samples].sort((a, b) => naturalCompare(a.groupId, b.groupId) || naturalCompare(a.episodeId, b.episodeId) || naturalCompare(a.sampleId, b.sampleId));
}

/** Compares strings with runs of digits compared as numbers; locale-free, so every machine orders alike. */
export function naturalCompare(a: string, b: string): number {
  const chunk = /(\d+)|(\D+)/g;
  const left = a.match(chunk) ?? [];
  const right = b.match(chunk) ?? [];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const x = left[i]!;
    const y = right[i]!;
    if (x === y) continue;
    const digits = /^\d/.test(x) && /^\d/.test(y);
    if (digits) {
      const byValue = BigInt(x) < BigInt(y) ? -1 : BigInt(x) > BigInt(y) ? 1 : 0;
      if (byValue !== 0) return byValue;
    }
    return x < y ? -1 : 1;
  }
  return left.length - right.length;
}

/** The sample's turns with policy tokens: its runs of loss-mask 1s (one per environment step the policy acted in). */
export function turnsOf(sample: Pick<TrainingSampleEvent, 'lossMask'>): number {
  return turnIndices(sample.lossMask).turns;
}

/** For every token, the index of the policy turn it belongs to (the run of loss-mask 1s it is in, or the last one before it). */
function turnIndices(lossMask: readonly number[]): { index: Int32Array; turns: number } {
  const index = new Int32Array(lossMask.length);
  let turns = 0;
  let previous = 0;
  lossMask.forEach((mask, t) => {
    if (mask === 1 && previous !== 1) turns++;
    index[t] = turns - 1;
    previous = mask;
  });
  return { index, turns };
}

export function buildBatch(samples: readonly TrainingSampleEvent[], head: ReplyHead, contextLength: number, options: { turnRows?: boolean } = {}): TrainingBatch {
  const kept: { sample: TrainingSampleEvent; from: number; length: number }[] = [];
  const skipped: { sampleId: string; reason: string }[] = [];
  for (const sample of canonicalOrder(samples)) {
    const from = options.turnRows ? 0 : Math.max(0, sample.tokenIds.length - (contextLength + 1));
    const length = sample.tokenIds.length - from - 1;
    let reason: string | undefined;
    if (length < 1) reason = 'fewer than 2 tokens';
    for (let t = from + 1; !reason && t < sample.tokenIds.length; t++) {
      if (sample.lossMask[t] === 1 && head.indexOf(sample.tokenIds[t]!) === undefined) {
        reason = `trained token ${sample.tokenIds[t]} at position ${t} is not in the policy's reply vocabulary (sample from another tokenizer or environment?)`;
      }
    }
    if (reason) skipped.push({ sampleId: sample.sampleId, reason });
    else kept.push({ sample, from, length });
  }
  const rows = kept.length;
  const time = Math.max(1, ...kept.map((k) => k.length));
  const ids = new Int32Array(rows * time);
  const targets = new Int32Array(rows * time);
  const mask = new Float32Array(rows * time);
  const advantages = new Float32Array(rows * time);
  const behaviourLogProbs = new Float32Array(rows * time);
  const episodeReward = new Float32Array(rows * time);
  const turnsLeft = new Float32Array(rows * time);
  let lossTokens = 0;
  let tokens = 0;
  kept.forEach(({ sample, from, length }, r) => {
    tokens += length;
    const turns = turnIndices(sample.lossMask);
    for (let t = 0; t < length; t++) {
      const at = r * time + t;
      const next = from + t + 1;
      ids[at] = sample.tokenIds[from + t]!;
      if (sample.lossMask[next] === 1) {
        targets[at] = head.indexOf(sample.tokenIds[next]!)!;
        mask[at] = 1;
        advantages[at] = sample.advantages[next]!;
        behaviourLogProbs[at] = sample.behaviourLogProbs[next]!;
        episodeReward[at] = sample.reward;
        turnsLeft[at] = turns.turns - 1 - turns.index[next]!;
        lossTokens++;
      }
    }
  });
  return { samples: kept.map((k) => k.sample), rows, time, ids, targets, mask, advantages, behaviourLogProbs, episodeReward, turnsLeft, lossTokens, tokens, skipped };
}

/**
 * The order rows are dealt into minibatches in epoch `epoch` of update `update`: a seeded permutation
 * (Fisher–Yates over Rng(update, epoch)), so the same update and epoch always give the same order.
 */
export function shuffledRows(rows: number, update: number, epoch: number): Int32Array {
  const rng = new Rng(update, epoch + 1);
  const order = Int32Array.from({ length: rows }, (_, i) => i);
  for (let i = rows - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** Rows of `batch` split into `parts` consecutive minibatches (sizes differ by at most one). */
export function minibatchRows(rows: number, parts: number): [number, number][] {
  const n = Math.max(1, Math.min(parts, rows));
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) out.push([Math.floor((i * rows) / n), Math.floor(((i + 1) * rows) / n)]);
  return out.filter(([a, b]) => b > a);
}

/**
 * The batch cut into one row per turn (a row starts at each BOS/OBS input token), keeping only the turns
 * with loss tokens. For a model with attentionSpan 'turn' this gives the same per-token log-probs (no token
 * attends across turns and positions restart at every turn) on rows ~maxTurns times shorter, so the
 * attention and the padding cost far less. Token-level fields keep their values; `samples` is unchanged.
 * A turn longer than `contextLength` keeps its last contextLength positions.
 */
export function splitTurnRows(batch: TrainingBatch, contextLength = Number.POSITIVE_INFINITY): TrainingBatch {
  const segments: [number, number][] = [];
  for (let r = 0; r < batch.rows; r++) {
    const base = r * batch.time;
    let length = batch.time;
    while (length > 0 && batch.ids[base + length - 1] === SpecialToken.PAD) length--;
    let start = 0;
    const close = (end: number) => {
      // A turn longer than the context keeps its last contextLength positions, as the sampler kept its window.
      const from = Math.max(start, end - contextLength);
      let scored = false;
      for (let t = from; t < end && !scored; t++) scored = batch.mask[base + t] === 1;
      if (scored) segments.push([base + from, base + end]);
    };
    for (let t = 1; t < length; t++) {
      const id = batch.ids[base + t];
      if (id === SpecialToken.OBS || id === SpecialToken.BOS) {
        close(t);
        start = t;
      }
    }
    close(length);
  }
  const rows = segments.length;
  const time = Math.max(1, ...segments.map(([a, b]) => b - a));
  const ids = new Int32Array(rows * time);
  const targets = new Int32Array(rows * time);
  const mask = new Float32Array(rows * time);
  const advantages = new Float32Array(rows * time);
  const behaviourLogProbs = new Float32Array(rows * time);
  const episodeReward = new Float32Array(rows * time);
  const turnsLeft = new Float32Array(rows * time);
  let tokens = 0;
  segments.forEach(([a, b], r) => {
    tokens += b - a;
    ids.set(batch.ids.subarray(a, b), r * time);
    targets.set(batch.targets.subarray(a, b), r * time);
    mask.set(batch.mask.subarray(a, b), r * time);
    advantages.set(batch.advantages.subarray(a, b), r * time);
    behaviourLogProbs.set(batch.behaviourLogProbs.subarray(a, b), r * time);
    episodeReward.set(batch.episodeReward.subarray(a, b), r * time);
    turnsLeft.set(batch.turnsLeft.subarray(a, b), r * time);
  });
  return { ...batch, rows, time, ids, targets, mask, advantages, behaviourLogProbs, episodeReward, turnsLeft, tokens };
}

/**
 * The batch's advantages minus the mean advantage of each reply token over the scored positions that carry a
 * signal (loss.centerByAction): the advantages of each token then sum to zero, so the update has no net push on
 * the policy's state-independent preference between tokens. A position whose advantage is exactly 0 (its group
 * or anchor state told nothing) keeps 0 rather than taking on the other states' mean.
 */
export function advantagesCentredByAction(batch: Pick<TrainingBatch, 'mask' | 'targets' | 'advantages'>): Float32Array {
  const sums = new Map<number, { sum: number; n: number }>();
  batch.mask.forEach((m, i) => {
    if (m !== 1 || batch.advantages[i] === 0) return;
    const s = sums.get(batch.targets[i]!) ?? { sum: 0, n: 0 };
    s.sum += batch.advantages[i]!;
    s.n++;
    sums.set(batch.targets[i]!, s);
  });
  return batch.advantages.map((a, i) => {
    if (batch.mask[i] !== 1 || a === 0) return a;
    const s = sums.get(batch.targets[i]!)!;
    return a - s.sum / s.n;
  });
}
