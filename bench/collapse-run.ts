// One run of `trajflow bench collapse`: the in-process loop with every batch's and update's real events fed
// through the detectors' engine (its default configuration), recorded iteration by iteration.
import type { LocalRunConfig } from '../learner/local/local-run.js';
import { ALGORITHMS } from './learning-algorithms.js';
import { COLLAPSE_DEFAULTS, type CollapseBenchConfig, type RunLabel } from './collapse-flags.js';
import { iterationLine, runReport, type IterationRecord, type RunReport } from './collapse-records.js';
import { runWithDetectors } from './detector-run.js';

/** The loop's configuration for a run of `algorithm`. */
export function collapseRunConfig(s: CollapseBenchConfig, algorithm: string): LocalRunConfig {
  const chosen = ALGORITHMS[algorithm]!;
  return {
    env: s.env,
    envOptions: s.preset.envOptions,
    iterations: s.iterations,
    groups: s.groups,
    groupSize: s.groupSize,
    seed: s.seed,
    tasks: s.tasks,
    evalEvery: s.iterations,
    evalTasks: 32,
    processing: {
      reward: { terms: [{ kind: 'env_return' }] },
      ...chosen,
      estimator: { ...chosen.estimator, options: s.estimatorOptions },
    },
    optimizer: s.optimizer,
    model: s.model,
    loss: s.loss,
    ...(s.templateEvery > 0 ? { templateCollapse: { every: s.templateEvery, pairs: COLLAPSE_DEFAULTS.templatePairs, turns: 'uniform' as const } } : {}),
  };
}

/** Trains the run labelled `label`, logging each iteration to stderr, and reports its alerts, fall and lead time. */
export async function runCollapseRun(s: CollapseBenchConfig, label: RunLabel, backend: string): Promise<RunReport> {
  const algorithm = s.algorithms[label];
  const started = Date.now();
  const runId = `bench-collapse-${label}-${algorithm}-${s.seed}`;
  const log = (record: IterationRecord) => console.error(iterationLine(label, algorithm, record, (Date.now() - started) / 1000));
  const { records, alerts, curve } = await runWithDetectors(collapseRunConfig(s, algorithm), runId, backend, { onRecord: log });
  const heldOutGreedy = curve.at(-1)?.eval?.greedySuccess ?? null;
  return runReport({ label, algorithm, heldOutGreedy, seconds: (Date.now() - started) / 1000 }, records, alerts);
}
