// Steps a later step of the episode names orphans (`info.orphans`, a JSON array of step indices): turns whose
// answer the agent never saw — its client went away, or retried the call — so the episode did not continue from
// them. They stay in the trajectory (its step indices stay whole) with their text, and without their tokens,
// so they add nothing to the training sample (docs/reference/wire-contract.md). Pure.
import type { StepEvent, TrajectoryStep } from '../../schemas/index.js';
import { trajectoryStepFields } from './trajectory-step.js';

/** The step indices the steps name as orphans (malformed lists are ignored). */
export function orphanIndices(steps: readonly StepEvent[]): Set<number> {
  const found = new Set<number>();
  for (const step of steps) {
    const raw = step.info.orphans;
    if (raw === undefined) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      continue;
    }
    if (!Array.isArray(parsed)) continue;
    for (const index of parsed) if (Number.isSafeInteger(index) && index >= 0 && index < step.stepIndex) found.add(index);
  }
  return found;
}

/** An orphan as a trajectory step: its text, reward and version, no tokens. */
export function orphanStep(s: StepEvent): TrajectoryStep {
  return { ...trajectoryStepFields(s), observationTokenIds: [], actionTokenIds: [], actionLogProbs: [] };
}
