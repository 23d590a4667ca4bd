// The in-process loop's learning curve (pure): one point per iteration — environment steps so far, the training
// episodes' success and reward, the update's metrics — with a held-out evaluation every `evalEvery` iterations and at
// the last one; and the iteration's episodes as the processors receive them (trajectories by group).
import { trajectoryFromSteps } from '../../processors/assembly/open-episode.js';
import type { RawGroup } from '../../processors/pipeline/process-batch.js';
import type { StepEvent } from '../../schemas/index.js';
import type { TemplateCollapseMetrics } from '../collapse/metrics.js';
import type { EvalResult } from '../eval/evaluate.js';
import type { UpdateMetrics } from '../train/update-tally.js';

export interface CurvePoint {
  readonly iteration: number;
  readonly envSteps: number;
  readonly trainSuccess: number;
  readonly trainReward: number;
  readonly samples: number;
  readonly update?: UpdateMetrics;
  /** Template-collapse metrics measured before this iteration's update (see LocalRunConfig.templateCollapse). */
  readonly template?: TemplateCollapseMetrics;
  readonly eval?: EvalResult;
}

/** One training episode played: the step events it published and its outcome. */
export interface PlayedEpisode {
  readonly steps: readonly StepEvent[];
  readonly success: boolean;
  readonly reward: number;
}

/** The point of the untrained policy, evaluated before the first iteration (evalAtStart). */
export function startPoint(evaluation: EvalResult): CurvePoint {
  return { iteration: -1, envSteps: 0, trainSuccess: 0, trainReward: 0, samples: 0, eval: evaluation };
}

/** Environment steps the episodes took. */
export function stepsOf(episodes: readonly PlayedEpisode[]): number {
  return episodes.reduce((s, e) => s + e.steps.length, 0);
}

/** The episodes as the processors receive them: each episode's trajectory, grouped by group id in the order they came. */
export function rawGroupsOf(episodes: readonly PlayedEpisode[]): RawGroup[] {
  const byGroup = new Map<string, ReturnType<typeof trajectoryFromSteps>['trajectory'][]>();
  for (const episode of episodes) {
    const { trajectory } = trajectoryFromSteps(episode.steps);
    byGroup.set(trajectory.groupId, [...(byGroup.get(trajectory.groupId) ?? []), trajectory]);
  }
  return [...byGroup].map(([groupId, trajectories]) => ({ groupId, trajectories }));
}

/** Whether the held-out evaluation runs after `iteration`: every `evalEvery` iterations, and after the last. */
export function evaluatesAfter(iteration: number, run: { readonly evalEvery: number; readonly iterations: number }): boolean {
  return (iteration + 1) % run.evalEvery === 0 || iteration === run.iterations - 1;
}

export interface IterationResult {
  readonly iteration: number;
  readonly envSteps: number;
  readonly episodes: readonly PlayedEpisode[];
  readonly samples: number;
  readonly update: UpdateMetrics | undefined;
  readonly template: TemplateCollapseMetrics | null;
  readonly evaluation: EvalResult | undefined;
}

export function curvePoint(r: IterationResult): CurvePoint {
  const { episodes } = r;
  return {
    iteration: r.iteration,
    envSteps: r.envSteps,
    trainSuccess: episodes.filter((e) => e.success).length / episodes.length,
    trainReward: episodes.reduce((s, e) => s + e.reward, 0) / episodes.length,
    samples: r.samples,
    update: r.update,
    ...(r.template ? { template: r.template } : {}),
    eval: r.evaluation,
  };
}
