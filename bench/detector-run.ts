// One in-process training run watched by the collapse detectors: every batch's and update's real events (the
// processors' rollout_stats and trajectories, the learner's learner_step) go through the detectors' engine with
// its default configuration, iteration by iteration, as `trajflow detectors` would read them from Kafka.
import { runLocal, type CurvePoint, type LocalRunConfig } from '../learner/local/local-run.js';
import { buildDetectorsConfig } from '../detectors/config.js';
import { CollapseEngine, type DetectorInput, type RaisedAlert } from '../detectors/engine.js';
import { alertMarks, batchInfo, batchInputs, iterationRecord, learnerStepInput, NO_BATCH, type IterationRecord, type RunAlert } from './collapse-records.js';

export interface WatchedRun {
  readonly records: IterationRecord[];
  readonly alerts: RunAlert[];
  readonly curve: CurvePoint[];
}

/** Who watches the run: each iteration's record as it is made, each detector input as it is fed. */
export interface RunObservers {
  readonly onRecord?: (record: IterationRecord) => void;
  readonly onInput?: (iteration: number, input: DetectorInput) => void;
}

/** Trains `config` under the detectors. */
export async function runWithDetectors(config: LocalRunConfig, runId: string, backend: string, observers: RunObservers = {}): Promise<WatchedRun> {
  const engine = new CollapseEngine(buildDetectorsConfig());
  const records: IterationRecord[] = [];
  const alerts: RunAlert[] = [];
  let batch = NO_BATCH;
  const feed = (iteration: number, input: DetectorInput): RaisedAlert[] => {
    observers.onInput?.(iteration, input);
    const raised = engine.observe(input);
    alerts.push(...alertMarks(iteration, raised));
    return raised;
  };
  const onBatch: LocalRunConfig['onBatch'] = (iteration, rawGroups, output) => {
    config.onBatch?.(iteration, rawGroups, output);
    const raised = batchInputs(runId, iteration, rawGroups, output).flatMap((input) => feed(iteration, input));
    batch = batchInfo(rawGroups, output, raised);
  };
  const onPoint = (point: CurvePoint) => {
    if (point.iteration < 0 || records.some((r) => r.iteration === point.iteration)) return;
    const raised = [...batch.raised];
    if (point.update) raised.push(...feed(point.iteration, learnerStepInput(runId, point, point.update, backend, batch.rewardMetrics)));
    const record = iterationRecord(point, batch, raised);
    records.push(record);
    observers.onRecord?.(record);
  };
  const curve = await runLocal({ ...config, runId, onBatch }, onPoint);
  // Trajectory windows still open at the end of the run (scored by flush), attributed to the last iteration.
  alerts.push(...alertMarks(records.at(-1)?.iteration ?? 0, engine.flush(), ' (at the end of the run)'));
  return { records, alerts, curve };
}
