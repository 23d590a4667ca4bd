// The critic's advantage: generalised advantage estimation over an episode's turns (Schulman et al. 2016,
// arXiv 1506.02438) with the value head as the critic, whitened over the batch's scored positions as PPO does.
// It gives each state its own expectation, where a group-relative estimator needs several rollouts of one
// task to compare against.
//
// Per turn k of an episode (its scored turns in order; V_k = the value head at the turn's first scored position,
// i.e. before its reply; R = the episode's reward, paid after its last turn, as the value target has it):
//   δ_k = γ^g·V_{k+1} − V_k   (g = the turns between k and k+1, normally 1)
//   δ_last = R·γ^{turnsLeft} − V_last
//   A_k = δ_k + (γλ)^g·A_{k+1}
// λ = 1 gives R·γ^{turnsLeft_k} − V_k (the Monte Carlo return against the baseline); λ < 1 trusts the critic's
// estimate of the next state more than the rest of the episode's luck.

/** What the estimate reads of a batch: positions [rows·time], scored where mask is 1. */
export interface CriticBatch {
  readonly rows: number;
  readonly time: number;
  readonly mask: Float32Array;
  readonly turnsLeft: Float32Array;
  readonly episodeReward: Float32Array;
}

interface Turn {
  readonly positions: number[];
  readonly turnsLeft: number;
  readonly reward: number;
}

/** The scored positions grouped into turns and the turns into episodes, in batch order (rows may hold one turn or a whole episode). */
function episodesOf(batch: CriticBatch): Turn[][] {
  const episodes: Turn[][] = [];
  let turn: Turn | null = null;
  let row = -1;
  for (let at = 0; at < batch.rows * batch.time; at++) {
    if (batch.mask[at] !== 1) continue;
    const r = Math.floor(at / batch.time);
    const left = batch.turnsLeft[at]!;
    if (turn && r === row && left === turn.turnsLeft) {
      turn.positions.push(at);
      continue;
    }
    const episode = episodes.at(-1);
    const continues = turn !== null && episode !== undefined && turn.turnsLeft > 0 && left < turn.turnsLeft;
    turn = { positions: [at], turnsLeft: left, reward: batch.episodeReward[at]! };
    if (continues) episode.push(turn);
    else episodes.push([turn]);
    row = r;
  }
  return episodes;
}

/** Per-position GAE advantages (0 at unscored positions), before whitening. */
export function turnAdvantages(batch: CriticBatch, values: ArrayLike<number>, gamma: number, lambda: number): Float32Array {
  const out = new Float32Array(batch.rows * batch.time);
  for (const turns of episodesOf(batch)) {
    let next = 0;
    for (let k = turns.length - 1; k >= 0; k--) {
      const turn = turns[k]!;
      const value = values[turn.positions[0]!]!;
      const after = turns[k + 1];
      let advantage: number;
      if (!after) advantage = turn.reward * gamma ** turn.turnsLeft - value;
      else {
        const gap = turn.turnsLeft - after.turnsLeft;
        advantage = gamma ** gap * values[after.positions[0]!]! - value + (gamma * lambda) ** gap * next;
      }
      for (const at of turn.positions) out[at] = advantage;
      next = advantage;
    }
  }
  return out;
}

/** The advantages centred and scaled to unit deviation over the scored positions; 0 elsewhere. */
export function whitenScored(advantages: Float32Array, mask: Float32Array): Float32Array {
  let n = 0;
  let sum = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 1) continue;
    n++;
    sum += advantages[i]!;
  }
  if (n === 0) return new Float32Array(advantages.length);
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] === 1) squares += (advantages[i]! - mean) ** 2;
  const std = Math.sqrt(squares / n);
  return advantages.map((a, i) => (mask[i] === 1 ? (a - mean) / (std + 1e-6) : 0));
}

/** The critic's advantage of every scored position: GAE over its episode's turns, whitened over the batch. */
export function criticAdvantages(batch: CriticBatch, values: ArrayLike<number>, gamma: number, lambda: number): Float32Array {
  return whitenScored(turnAdvantages(batch, values, gamma, lambda), batch.mask);
}
