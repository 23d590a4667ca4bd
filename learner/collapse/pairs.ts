// Which (prompt, reply) pairs of a training batch RAGEN-2's cross-scoring looks at (docs/algorithms.md §5,
// "Multi-turn sampling"): trajectories uniformly, then one turn uniformly within each; or the first turn
// only, where a group's rollouts share their prompt (the paper's N prompts × K samples).
// A turn is one run of generated tokens (loss mask 1); its prompt is every token before it, its reply the
// run itself. Identical prompts are one column, so a reply's own column is the prompt's content, not
// its trajectory. Seeded: the same batch and seed pick the same pairs.
import { Rng } from '../../core/rng.js';

export interface PairSource {
  readonly tokenIds: readonly number[];
  readonly lossMask: readonly number[];
}

export interface ScoringPairs {
  /** Distinct prompts (columns), token ids. */
  readonly prompts: readonly (readonly number[])[];
  /** Replies (rows) with the column of their own prompt. */
  readonly replies: readonly { readonly tokens: readonly number[]; readonly own: number }[];
}

export type TurnChoice = 'uniform' | 'first';

/** [start, end) of every run of loss-mask 1 (the policy's turns). */
export function generatedTurns(mask: readonly number[]): [number, number][] {
  const turns: [number, number][] = [];
  for (let t = 0; t < mask.length; t++) {
    if (mask[t] !== 1) continue;
    const start = t;
    while (t < mask.length && mask[t] === 1) t++;
    turns.push([start, t]);
  }
  return turns;
}

/** Up to `count` pairs, one per trajectory (drawn without replacement), each at a turn chosen by `turns`. */
export function choosePairs(samples: readonly PairSource[], count: number, seed: number, turns: TurnChoice = 'uniform'): ScoringPairs {
  const rng = new Rng(seed);
  const order = samples.map((_, i) => i);
  // Fisher–Yates: a uniform subset of trajectories, in a seeded order.
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const prompts: number[][] = [];
  const byKey = new Map<string, number>();
  const replies: { tokens: number[]; own: number }[] = [];
  for (const index of order) {
    if (replies.length >= count) break;
    const sample = samples[index]!;
    const found = generatedTurns(sample.lossMask);
    const usable = found.filter(([start]) => start > 0);
    if (usable.length === 0) continue;
    const [start, end] = turns === 'first' ? usable[0]! : usable[rng.int(usable.length)]!;
    const prompt = sample.tokenIds.slice(0, start);
    const key = prompt.join(',');
    let own = byKey.get(key);
    if (own === undefined) {
      own = prompts.length;
      prompts.push(prompt);
      byKey.set(key, own);
    }
    replies.push({ tokens: sample.tokenIds.slice(start, end), own });
  }
  return { prompts, replies };
}
