// REINFORCE++ (docs/algorithms.md §1, arXiv 2501.03262; verl `compute_reinforce_plus_plus_outcome_advantage`):
//   G_t = r_t + γ·G_{t+1}, the running sum reset after every position whose mask is 0,
//   A = masked_whiten(G) over the whole batch.
// Positions are verl's tokens; the function does not care what they are. The registry adapter
// (registry.ts) feeds it one position per step (turn) weighted by the step's action-token count; see there.
import { maskedWhiten } from './whiten.js';

export interface ReinforcePlusPlusSequence {
  /** Reward at each position (verl: the outcome on the last valid token, 0 elsewhere). */
  rewards: readonly number[];
  /** Weight of each position in the whitening, 0 for positions outside the loss (default all 1). */
  mask?: readonly number[];
}

export interface ReinforcePlusPlusOptions {
  /** Discount γ per position (verl `algorithm.gamma`, default 1.0). */
  gamma?: number;
}

/** The masked discounted returns, exactly verl's loop: store G_t, then G ← G·mask_t. */
export function maskedDiscountedReturns(rewards: readonly number[], mask: readonly number[], gamma: number): number[] {
  const returns = new Array<number>(rewards.length);
  let running = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    running = rewards[t]! + gamma * running;
    returns[t] = running;
    if (mask[t] === 0) running = 0; // "reset after EOS": verl multiplies by the 0/1 mask
  }
  return returns;
}

/** Advantages per position for a whole batch (every group together). */
export function reinforcePlusPlusAdvantages(batch: readonly ReinforcePlusPlusSequence[], { gamma = 1.0 }: ReinforcePlusPlusOptions = {}): number[][] {
  const masks = batch.map((seq) => seq.mask ?? seq.rewards.map(() => 1));
  const returns = batch.map((seq, i) => maskedDiscountedReturns(seq.rewards, masks[i]!, gamma));
  return maskedWhiten(returns, masks);
}
