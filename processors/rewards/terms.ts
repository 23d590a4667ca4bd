// Evaluates one reward term on one trajectory, unweighted: the per-step part and the trajectory-level
// part (which the builder puts on the last step).
import { TrajflowError } from '../../core/errors.js';
import type { TrajectoryEvent } from '../../schemas/index.js';
import { dapoOverlongPenalty } from './overlong.js';
import { registeredReward } from './registry.js';
import type { RewardTerm } from './types.js';
import { actionTokenCount } from '../../schemas/wire-step.js';

export interface TermValue {
  /** One value per step. */
  perStep: number[];
  /** Trajectory-level value, placed on the last step. */
  scalar: number;
}

function perStepOf(trajectory: TrajectoryEvent, value: (index: number) => number): number[] {
  return trajectory.steps.map((_, index) => value(index));
}

function customValue(term: Extract<RewardTerm, { kind: 'custom' }>, trajectory: TrajectoryEvent): TermValue {
  const fn = term.fn ?? registeredReward(term.name);
  if (fn === undefined) {
    throw new TrajflowError('REWARD', `custom reward '${term.name}' is no longer registered; register it again with registerReward.`);
  }
  const out = fn(trajectory);
  if (typeof out === 'number') {
    if (!Number.isFinite(out)) {
      throw new TrajflowError('REWARD', `custom reward '${term.name}' returned ${out} for episode ${trajectory.episodeId}; return a finite number.`);
    }
    return { perStep: perStepOf(trajectory, () => 0), scalar: out };
  }
  const steps = out?.perStep;
  if (!Array.isArray(steps) || steps.length !== trajectory.steps.length || !steps.every(Number.isFinite)) {
    throw new TrajflowError(
      'REWARD',
      `custom reward '${term.name}' must return a finite number or { perStep } with ${trajectory.steps.length} ` +
        `finite values (one per step) for episode ${trajectory.episodeId}.`,
    );
  }
  return { perStep: [...steps], scalar: 0 };
}

export function termValue(term: RewardTerm, trajectory: TrajectoryEvent): TermValue {
  const steps = trajectory.steps;
  switch (term.kind) {
    case 'env_return':
      return { perStep: steps.map((step) => step.reward), scalar: 0 };
    case 'success':
      return { perStep: perStepOf(trajectory, () => 0), scalar: trajectory.success ? 1 : 0 };
    case 'invalid_action_penalty':
      return { perStep: steps.map((step) => (step.actionValid ? 0 : -term.penalty)), scalar: 0 };
    case 'step_penalty':
      return { perStep: perStepOf(trajectory, () => -term.penalty), scalar: 0 };
    case 'overlong_penalty': {
      const options = { maxLength: term.maxLength, cacheLength: term.cacheLength, factor: term.factor ?? 1.0 };
      if (term.scope === 'turn') {
        return { perStep: steps.map((step) => dapoOverlongPenalty(actionTokenCount(step), options)), scalar: 0 };
      }
      const length = steps.reduce((sum, step) => sum + actionTokenCount(step), 0);
      return { perStep: perStepOf(trajectory, () => 0), scalar: dapoOverlongPenalty(length, options) };
    }
    case 'custom':
      return customValue(term, trajectory);
  }
}
