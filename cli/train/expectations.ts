// What `trajflow train` tells a user to expect from a preset on 2 CPU cores, as data: the held-out success the
// preset is meant to reach and, once measured with `trajflow bench learning --path real` (docs/results/learning.md),
// the median env steps and minutes it took there. An env without measured figures gets no line.

export interface TrainExpectation {
  /** The held-out greedy success the preset is meant to reach. */
  readonly target: number;
  /** Median env steps to the first evaluation at or above `target`, over the measured seeds. */
  readonly envStepsToTarget?: number;
  /** Median wall minutes to that evaluation on 2 CPU cores. */
  readonly minutesOn2Cores?: number;
}

export const TRAIN_EXPECTATIONS: Readonly<Record<string, TrainExpectation>> = {
  FrozenLake: { target: 0.9, envStepsToTarget: 48_000, minutesOn2Cores: 7 },
  // The median of seeds 1–3 (the real path makes the in-process loop's updates), at the real path's measured rate.
  Sokoban: { target: 0.5, envStepsToTarget: 273_000, minutesOn2Cores: 41 },
  Bandit: { target: 0.9 },
};

/** The start line for `env` (undefined when nothing was measured for it). */
export function expectationLine(env: string, expectation: TrainExpectation | undefined): string | undefined {
  if (expectation?.envStepsToTarget === undefined) return undefined;
  const minutes = expectation.minutesOn2Cores === undefined ? '' : `, ≈ ${formatMinutes(expectation.minutesOn2Cores)} on 2 cores`;
  return `trajflow train: ${env} preset — held-out ≥ ${expectation.target} typically by ${expectation.envStepsToTarget.toLocaleString('en-US')} env steps${minutes} (docs/results/learning.md)`;
}

/** `6 minutes`, `1 minute`, `1.5 minutes`. */
function formatMinutes(minutes: number): string {
  const rounded = minutes < 10 ? Math.round(minutes * 10) / 10 : Math.round(minutes);
  return `${rounded} minute${rounded === 1 ? '' : 's'}`;
}
