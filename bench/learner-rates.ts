// The figures of `trajflow bench learner` (pure): the matMul probes', the updates' and the sampling's rates, and
// their medians over the interleaved rounds.
import { median } from './median.js';

export interface MatMulRate {
  readonly shape: string;
  readonly flops: number;
  readonly medianMs: number;
  readonly flopsPerSec: number;
}

export interface TrainingRate {
  readonly rows: number;
  readonly time: number;
  readonly tokens: number;
  readonly lossTokens: number;
  readonly flopsPerUpdate: number;
  readonly updateMs: number[];
  readonly medianMs: number;
  readonly tokensPerSec: number;
  readonly flopsPerSec: number;
}

export interface InterleavedRates {
  /** The reference probes, then the others. */
  readonly matMul: MatMulRate[];
  readonly training: TrainingRate;
  /** Per round: training FLOP/s over the reference's matMul FLOP/s measured right before it. */
  readonly roundRatios: number[];
  /** Median of roundRatios. */
  readonly ratio: number;
  /**
   * With `compareKernels`: an update on the WASM backend's own BatchMatMul and Identity in each round too
   * (learner/kernels off), and the median over rounds of its time over trajflow's kernels' time.
   */
  readonly backendKernels?: { readonly updateMs: number[]; readonly medianMs: number; readonly speedup: number };
}

export interface SamplingRate {
  readonly requests: number;
  readonly meanContextTokens: number;
  readonly medianMs: number;
  readonly repliesPerSec: number;
  readonly tokensPerSec: number;
}

/** What the interleaved rounds timed, round by round. */
export interface RoundTimes {
  /** Per probe, its ms per product in each round. */
  readonly probeMs: number[][];
  readonly updateMs: number[];
  readonly roundRatios: number[];
  /** With compareKernels: the update on the backend's own kernels, and its time over trajflow's kernels'. */
  readonly backendMs: number[];
  readonly speedups: number[];
}

/** A round's training FLOP/s over the reference probes' FLOP/s, both timed in that round. */
export function roundRatio(flopsPerUpdate: number, updateMs: number, referenceFlops: number, referenceMs: number): number {
  return flopsPerUpdate / updateMs / (referenceFlops / referenceMs);
}

/** The rounds' medians: each probe's rate, the update's, the ratio, and (comparing kernels) the backend kernels' speed-up. */
export function interleavedRates(
  probes: readonly { readonly shape: string; readonly flops: number }[],
  batch: { readonly rows: number; readonly time: number; readonly tokens: number; readonly lossTokens: number },
  flopsPerUpdate: number,
  times: RoundTimes,
  compareKernels: boolean,
): InterleavedRates {
  const medianMs = median(times.updateMs);
  return {
    matMul: probes.map((probe, i) => {
      const ms = median(times.probeMs[i]!);
      return { shape: probe.shape, flops: probe.flops, medianMs: ms, flopsPerSec: probe.flops / (ms / 1000) };
    }),
    training: {
      rows: batch.rows,
      time: batch.time,
      tokens: batch.tokens,
      lossTokens: batch.lossTokens,
      flopsPerUpdate,
      updateMs: times.updateMs,
      medianMs,
      tokensPerSec: batch.tokens / (medianMs / 1000),
      flopsPerSec: flopsPerUpdate / (medianMs / 1000),
    },
    roundRatios: times.roundRatios,
    ratio: median(times.roundRatios),
    ...(compareKernels ? { backendKernels: { updateMs: times.backendMs, medianMs: median(times.backendMs), speedup: median(times.speedups) } } : {}),
  };
}
