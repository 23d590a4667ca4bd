// The figures of one `bench scale` configuration (pure): its window's rate, CPU per step and sample counts, and the
// transactions its processes ran over their lives.
import { cpuPerStep, type ScaleCpuPerStep, type ScaleCpuSpent } from './scale-cpu.js';

export interface ScaleResult extends ScaleCpuPerStep {
  readonly processes: number;
  readonly steps: number;
  readonly seconds: number;
  readonly stepsPerSecond: number;
  readonly samples: number;
  readonly distinctSamples: number;
  readonly expectedSamples: number;
  readonly duplicates: number;
  readonly missing: number;
  /** Transactions the processes ran over their lives (from their stop lines), and steps read per transaction: smaller transactions cost more per step. */
  readonly transactions: number | null;
  readonly stepsPerTransaction: number | null;
}

export type WindowFigures = Omit<ScaleResult, 'transactions' | 'stepsPerTransaction'>;

/** CPU ms so far of each processor process and of the managed broker (null when it is not trajflow's own). */
export interface CpuReading {
  readonly processesMs: readonly number[];
  readonly brokerMs: number | null;
}

/** The CPU spent between two readings. */
export function cpuSpent(start: CpuReading, end: CpuReading): ScaleCpuSpent {
  return {
    processesMs: end.processesMs.map((ms, i) => ms - start.processesMs[i]!),
    brokerMs: end.brokerMs === null || start.brokerMs === null ? null : end.brokerMs - start.brokerMs,
  };
}

/** The window as measured: its groups and steps, the warm-up before it, and how long it lasted. */
export interface ScaleWindow {
  readonly processes: number;
  readonly groups: number;
  /** Warm-up groups of all the processes together, and their distinct samples (counted before the window's). */
  readonly warmGroups: number;
  readonly warmedSamples: number;
  readonly steps: number;
  readonly seconds: number;
}

/** The window's figures from the samples counted on the whole topic (the warm-up's included) and the CPU spent. */
export function windowFigures(w: ScaleWindow, counts: { readonly total: number; readonly distinct: number }, spent: ScaleCpuSpent, groupSize: number): WindowFigures {
  const expected = (w.groups + w.warmGroups) * groupSize;
  return {
    ...cpuPerStep(spent, w.steps),
    processes: w.processes,
    steps: w.steps,
    seconds: w.seconds,
    stepsPerSecond: w.steps / w.seconds,
    samples: counts.total - w.warmedSamples,
    distinctSamples: counts.distinct - w.warmedSamples,
    expectedSamples: w.groups * groupSize,
    duplicates: counts.total - counts.distinct,
    missing: expected - counts.distinct,
  };
}

/** The result with the processes' transactions over their lives (null when a process's stop line was missing). */
export function withTransactions(result: WindowFigures, life: { readonly transactions: number; readonly stepsRead: number } | null): ScaleResult {
  return { ...result, transactions: life?.transactions ?? null, stepsPerTransaction: life === null || life.transactions === 0 ? null : life.stepsRead / life.transactions };
}
