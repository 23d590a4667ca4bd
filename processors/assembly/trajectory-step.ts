// A step's trajectory-step fields copied into a plain object: the one place that lists them, for the copies
// that change one field (a moved reward, an orphan's dropped tokens). Pure.
import type { StepEvent, TrajectoryStep } from '../../schemas/index.js';

/** The trajectory-step fields of `s` as a plain object (a WireStep's fields are decoded for the copy). */
export function trajectoryStepFields(s: StepEvent | TrajectoryStep): TrajectoryStep {
  return {
    stepIndex: s.stepIndex,
    observation: s.observation,
    observationTokenIds: s.observationTokenIds,
    action: s.action,
    actionTokenIds: s.actionTokenIds,
    actionLogProbs: s.actionLogProbs,
    policyVersion: s.policyVersion,
    reward: s.reward,
    actionValid: s.actionValid,
    stateKey: s.stateKey,
    eventTimeMs: s.eventTimeMs,
  };
}
