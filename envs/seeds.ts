// The seed split: training never sees an evaluation seed. A seed fixes a task (a map, a room, a problem),
// so held-out seeds are held-out tasks. (RAGEN trains on 10000 + counter and validates on 123; we keep
// the two ranges disjoint by construction instead.)
import { EvalSeedInTrainingError } from './errors.js';

export interface SeedRange {
  /** First seed of the range. */
  readonly first: number;
  /** One past the last seed. */
  readonly end: number;
  contains(seed: number): boolean;
  /** `count` consecutive seeds starting `offset` seeds into the range. */
  take(count: number, offset?: number): number[];
}

function seedRange(first: number, end: number): SeedRange {
  return {
    first,
    end,
    contains: (seed) => Number.isInteger(seed) && seed >= first && seed < end,
    take(count, offset = 0) {
      if (!Number.isInteger(count) || count < 0 || !Number.isInteger(offset) || offset < 0 || first + offset + count > end) {
        throw new RangeError(`cannot take ${count} seeds at offset ${offset} from [${first}, ${end})`);
      }
      return Array.from({ length: count }, (_, i) => first + offset + i);
    },
  };
}

/** Training seeds: [0, 1e9). */
export const TRAIN_SEEDS: SeedRange = seedRange(0, 1_000_000_000);
/** Held-out evaluation seeds: [1e9, 2e9). Still below 2^32, so every seed fits a 32-bit PRNG state. */
export const EVAL_SEEDS: SeedRange = seedRange(1_000_000_000, 2_000_000_000);

export function isEvalSeed(seed: number): boolean {
  return seed >= EVAL_SEEDS.first;
}

/** Throws EvalSeedInTrainingError for a held-out seed; training code calls it before every reset. */
export function assertTrainingSeed(seed: number): void {
  if (isEvalSeed(seed)) throw new EvalSeedInTrainingError(seed, EVAL_SEEDS.first);
}

/**
 * The first training seed of run seed `seed`: its tasks are seed·1,000,000, seed·1,000,000 + 1, … (the
 * in-process loop and `trajflow train` alike, so the same seed gives the same tasks on both paths).
 */
export function taskSeedBase(seed: number): number {
  if (!Number.isInteger(seed) || seed < 0 || seed >= 1000) throw new RangeError(`run seed must be an integer in [0, 1000), got ${seed}`);
  return seed * 1_000_000;
}
