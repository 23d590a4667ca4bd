// What `bench learning --path real` reads from the `trajflow train` it runs (pure): the command line it starts, and
// the held-out curve and the learner's staleness gathered line by line from the run's output.
import { parseEvaluationLine } from '../learner/eval/evaluation-event.js';

export interface CurveEntry {
  readonly version: number;
  readonly envSteps: number;
  readonly heldOut: number;
  /** Wall seconds from the start of the seed's run to when the evaluation was read. */
  readonly seconds: number;
}

/** The `trajflow train` arguments of one seed's run on its own run id and port. */
export function trainArgs(run: {
  readonly env: string;
  readonly seed: number;
  readonly updates: number;
  readonly runId: string;
  readonly evalEvery: number;
  readonly evalTasks: number;
  readonly maxStaleness: number;
  readonly port: number;
}): string[] {
  return [
    'train',
    '--env',
    run.env,
    '--seed',
    String(run.seed),
    '--updates',
    String(run.updates),
    '--run-id',
    run.runId,
    '--eval-every',
    String(run.evalEvery),
    '--eval-tasks',
    String(run.evalTasks),
    '--max-staleness',
    String(run.maxStaleness),
    '--port',
    String(run.port),
  ];
}

/** What the run's lines said so far. */
export interface TrainRead {
  readonly curve: readonly CurveEntry[];
  readonly random: number;
  readonly stalenessMax: number;
  readonly droppedStale: number;
  /** Updates done: one past the highest update a learner line reported. */
  readonly done: number;
}

export const NOTHING_READ: TrainRead = Object.freeze({ curve: [], random: Number.NaN, stalenessMax: 0, droppedStale: 0, done: 0 });

const UPDATE_LINE = /learner: update (\d+) → v\d+ .* staleness [\d.]+ \(max (\d+)\)\s+dropped stale (\d+)/;

/** One output line read `seconds` into the run: an evaluation adds a curve point (and a progress line), a learner update line its staleness. */
export function readTrainLine(read: TrainRead, line: string, seconds: number, seed: number): { read: TrainRead; log: string | null } {
  let next = read;
  let log: string | null = null;
  const evaluation = parseEvaluationLine(line);
  if (evaluation && evaluation.envSteps >= 0) {
    const entry = { version: evaluation.version, heldOut: evaluation.success, envSteps: evaluation.envSteps, seconds };
    next = { ...next, curve: [...next.curve, entry], random: evaluation.random };
    log = `  real path seed ${seed}: v${evaluation.version}, ${evaluation.envSteps} env steps, ${seconds.toFixed(0)} s, held-out ${evaluation.success.toFixed(3)}`;
  }
  const update = UPDATE_LINE.exec(line);
  if (update) {
    next = {
      ...next,
      done: Math.max(next.done, Number(update[1]) + 1),
      stalenessMax: Math.max(next.stalenessMax, Number(update[2])),
      droppedStale: next.droppedStale + Number(update[3]),
    };
  }
  return { read: next, log };
}
