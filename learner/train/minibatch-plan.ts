// How one update deals its batch (pure): `epochs` passes, each cut into `minibatches` consecutive row ranges.
// With shuffleMinibatches (and more than one minibatch) every epoch first puts the rows in a seeded order
// (shuffledRows: fixed by the update number and the epoch, so a run repeats itself and resumes alike) —
// consecutive rows come from the same groups, so unshuffled a minibatch is a few groups.
import { minibatchRows, shuffledRows } from './batch.js';
import type { OptimizerConfig } from './config.js';

export interface EpochPlan {
  /** The rows' order for this epoch (row i of the dealt batch is row order[i]); null: as built. */
  readonly order: Int32Array | null;
  /** [from, to) row ranges, one optimizer step each, in order. */
  readonly minibatches: readonly (readonly [number, number])[];
}

export function minibatchPlan(rows: number, optimizer: Pick<OptimizerConfig, 'epochs' | 'minibatches' | 'shuffleMinibatches'>, update: number): EpochPlan[] {
  const shuffle = optimizer.shuffleMinibatches && optimizer.minibatches > 1;
  return Array.from({ length: optimizer.epochs }, (_, epoch) => ({
    order: shuffle ? shuffledRows(rows, update, epoch) : null,
    minibatches: minibatchRows(rows, optimizer.minibatches),
  }));
}
