// Rewards a later step of an episode gives earlier ones (`info.stepRewards`, a JSON object of step index to
// reward): `trajflow gateway` learns a turn's or a call's reward only when the agent finishes the episode, and a
// published step never changes, so the outcome step holds those rewards in its own and names the step each
// belongs to. The trajectory moves each onto its step, so per-step returns (GiGPO's, REINFORCE++'s) credit that
// turn, and the trajectory's return stays the same (docs/reference/wire-contract.md). Pure.
import type { StepEvent, TrajectoryStep } from '../../schemas/index.js';
import { trajectoryStepFields } from './trajectory-step.js';

/** The step rewards a step names, for indices below its own; a value that is not such an object names none. */
export function namedStepRewards(step: StepEvent): Map<number, number> {
  const raw = step.info.stepRewards;
  const out = new Map<number, number>();
  if (raw === undefined) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
  for (const [key, reward] of Object.entries(parsed)) {
    const index = /^\d{1,9}$/.test(key) ? Number(key) : -1;
    if (index < 0 || index >= step.stepIndex || typeof reward !== 'number' || !Number.isFinite(reward)) return new Map();
    out.set(index, reward);
  }
  return out;
}

/** A trajectory step as a plain object with another reward. */
function withReward(s: TrajectoryStep, reward: number): TrajectoryStep {
  return { ...trajectoryStepFields(s), reward };
}

/**
 * `steps` (the trajectory's, aligned with the episode's `events`) with every named step reward moved from the
 * naming step onto the step it names; a reward naming a step that is not in the trajectory stays where it is.
 * `credited` counts the steps that received one.
 */
export function moveStepRewards(events: readonly StepEvent[], steps: readonly TrajectoryStep[]): { steps: TrajectoryStep[]; credited: number } {
  const position = new Map(events.map((event, at) => [event.stepIndex, at]));
  const rewards = steps.map((step) => step.reward);
  const credited = new Set<number>();
  events.forEach((event, from) => {
    for (const [index, reward] of namedStepRewards(event)) {
      const to = position.get(index);
      if (to === undefined || reward === 0) continue;
      rewards[to]! += reward;
      rewards[from]! -= reward;
      credited.add(to);
    }
  });
  if (credited.size === 0) return { steps: [...steps], credited: 0 };
  return { steps: steps.map((step, at) => (rewards[at] === step.reward ? step : withReward(step, rewards[at]!))), credited: credited.size };
}
