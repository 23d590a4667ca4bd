// Discounted step returns, GiGPO Eq. 5 (docs/algorithms.md §3 step 2): R_t = Σ_{k≥0} γ^k r_{t+k}, computed
// backwards over one trajectory's steps as verl-agent's compute_step_discounted_returns does.

/** G_t = r_t + γ·G_{t+1}, with G after the last step = 0. */
export function discountedReturns(rewards: readonly number[], gamma: number): number[] {
  const returns = new Array<number>(rewards.length);
  let running = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    running = rewards[t]! + gamma * running;
    returns[t] = running;
  }
  return returns;
}
