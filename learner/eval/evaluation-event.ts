// What one held-out evaluation reports (pure): the `evaluation` event the evaluator publishes on <prefix>.evaluations
// (stored in ClickHouse, drawn on the run page) and the line it prints (`trajflow train` reads its progress and
// closing summary from it: cli/train/run-progress.ts).
import type { EvaluationEvent, PolicyVersionEvent } from '../../schemas/index.js';
import type { EvalComparison } from './compare.js';

export interface EvaluatedOn {
  readonly envName: string;
  readonly envOptions: Readonly<Record<string, unknown>>;
}

/** The event of `version` evaluated on `env`; what it was trained on comes from the version event (-1: not recorded). */
export function evaluationEvent(runId: string, version: PolicyVersionEvent, env: EvaluatedOn, result: EvalComparison, durationMs: number, nowMs: number): EvaluationEvent {
  const { policy, random } = result;
  return {
    runId,
    policyVersion: version.version,
    trainedIteration: version.metrics.iteration ?? -1,
    envSteps: version.metrics.envSteps ?? -1,
    envName: env.envName,
    envOptions: JSON.stringify(env.envOptions),
    tasks: policy.tasks,
    greedySuccess: policy.greedySuccess,
    meanReward: policy.meanReward,
    meanSteps: policy.meanSteps,
    randomSuccess: random.success,
    durationMs,
    eventTimeMs: nowMs,
  };
}

export function evaluationLine(event: EvaluationEvent): string {
  const steps = event.envSteps >= 0 ? `, ${event.envSteps} env steps` : '';
  return `evaluator: v${event.policyVersion} held-out ${event.greedySuccess.toFixed(3)} (random ${event.randomSuccess.toFixed(3)}, ${event.tasks} tasks${steps}, ${(event.durationMs / 1000).toFixed(1)} s)`;
}

/** An evaluation as its line reports it (envSteps -1: not reported). */
export interface HeldOut {
  readonly version: number;
  readonly success: number;
  readonly random: number;
  readonly envSteps: number;
}

const EVALUATION_LINE = /evaluator: v(\d+) held-out ([\d.]+) \(random ([\d.]+), \d+ tasks(?:, (\d+) env steps)?/;

/** The evaluation an evaluationLine() reports, wherever it stands in `line` (a part's prefix before it); null when none. */
export function parseEvaluationLine(line: string): HeldOut | null {
  const match = EVALUATION_LINE.exec(line);
  return match ? { version: Number(match[1]), success: Number(match[2]), random: Number(match[3]), envSteps: Number(match[4] ?? -1) } : null;
}
