// One run of `trajflow bench collapse`: the in-process loop with every batch's and update's real events fed
// through the detectors' engine (its default configuration), recorded iteration by iteration.
import { runLocal, type CurvePoint, type LocalRunConfig } from '../learner/local/local-run.js';
import { buildDetectorsConfig } from '../detectors/config.js';
import { CollapseEngine, type DetectorInput, type RaisedAlert } from '../detectors/engine.js';
import { ALGORITHMS } from './learning-algorithms.js';
import { COLLAPSE_DEFAULTS, type CollapseBenchConfig, type RunLabel } from './collapse-flags.js';
import {
  alertMarks,
  batchInfo,
  batchInputs,
  iterationLine,
  iterationRecord,
  learnerStepInput,
  NO_BATCH,
  runReport,
  type IterationRecord,
  type RunAlert,
  type RunReport,
} from './collapse-records.js';

/** The loop's configuration for a run of `algorithm`; `onBatch` sees every batch before its update. */
function collapseRunConfig(s: CollapseBenchConfig, algorithm: string, onBatch: LocalRunConfig['onBatch']): LocalRunConfig {
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
    onBatch,
  };
}

/** Trains the run labelled `label`, logging each iteration to stderr, and reports its alerts, fall and lead time. */
export async function runCollapseRun(s: CollapseBenchConfig, label: RunLabel, backend: string): Promise<RunReport> {
  const algorithm = s.algorithms[label];
  const started = Date.now();
  const runId = `bench-collapse-${label}-${algorithm}-${s.seed}`;
  const engine = new CollapseEngine(buildDetectorsConfig());
  const records: IterationRecord[] = [];
  const alerts: RunAlert[] = [];
  let batch = NO_BATCH;
  const feed = (iteration: number, input: DetectorInput): RaisedAlert[] => {
    const raised = engine.observe(input);
    alerts.push(...alertMarks(iteration, raised));
    return raised;
  };
  const onBatch: LocalRunConfig['onBatch'] = (iteration, rawGroups, output) => {
    const raised = batchInputs(runId, iteration, rawGroups, output).flatMap((input) => feed(iteration, input));
    batch = batchInfo(rawGroups, output, raised);
  };
  const onPoint = (point: CurvePoint) => {
    if (point.iteration < 0 || records.some((r) => r.iteration === point.iteration)) return;
    const raised = [...batch.raised];
    if (point.update) raised.push(...feed(point.iteration, learnerStepInput(runId, point, point.update, backend)));
    const record = iterationRecord(point, batch, raised);
    records.push(record);
    console.error(iterationLine(label, algorithm, record, (Date.now() - started) / 1000));
  };
  const curve = await runLocal(collapseRunConfig(s, algorithm, onBatch), onPoint);
  // Trajectory windows still open at the end of the run (scored by flush), attributed to the last iteration.
  alerts.push(...alertMarks(s.iterations - 1, engine.flush(), ' (at the end of the run)'));
  const heldOutGreedy = curve.at(-1)?.eval?.greedySuccess ?? null;
  return runReport({ label, algorithm, heldOutGreedy, seconds: (Date.now() - started) / 1000 }, records, alerts);
}
