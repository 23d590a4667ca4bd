// CPU per step in `bench scale`: what the processor processes and the broker spent on one configuration's
// window (the first step published → the last sample readable), per step. On a machine whose cores they
// share, steps/s cannot show scale-out; CPU per step shows what each added process costs in coordination
// (group membership, fetches, one transactional producer per partition) whatever the cores.

/** CPU ms used in the window: each processor process's, and the broker's (null: not trajflow's own broker). */
export interface ScaleCpuSpent {
  readonly processesMs: readonly number[];
  readonly brokerMs: number | null;
}

export interface ScaleCpuPerStep {
  /** Processes + broker (the broker counted as 0 when it could not be read), CPU-seconds per step. */
  readonly cpuSecondsPerStep: number;
  readonly processesCpuSecondsPerStep: number;
  /** null when the broker's CPU could not be read. */
  readonly brokerCpuSecondsPerStep: number | null;
}

export function cpuPerStep(spent: ScaleCpuSpent, steps: number): ScaleCpuPerStep {
  if (!(steps > 0)) throw new RangeError(`steps must be > 0, got ${steps}`);
  const processesMs = spent.processesMs.reduce((sum, ms) => sum + ms, 0);
  const perStep = (ms: number) => ms / 1000 / steps;
  return {
    cpuSecondsPerStep: perStep(processesMs + (spent.brokerMs ?? 0)),
    processesCpuSecondsPerStep: perStep(processesMs),
    brokerCpuSecondsPerStep: spent.brokerMs === null ? null : perStep(spent.brokerMs),
  };
}

/** CPU per step with `more` processes over CPU per step with one: 1 means adding processes costs no extra CPU. */
export function cpuPerStepRatio(one: ScaleCpuPerStep, more: ScaleCpuPerStep): number {
  return more.cpuSecondsPerStep / one.cpuSecondsPerStep;
}
