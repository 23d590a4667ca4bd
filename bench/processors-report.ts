// The flags and the printed report of `trajflow bench processors` (pure): each round, the medians against the raw
// ceiling and the exactly-once copy, the CPU per step against its budget, and the latency with its transactions.
import { fmt, option } from './args.js';
import { TARGET_RATIO, type measureProcessors } from './processors.js';

export function processorsFlags(args: readonly string[]) {
  return {
    // 4,000 groups = 128,000 steps: a throughput window long enough that the JIT's warm-up is a small part of it (docs/results/processors.md).
    groups: option(args, '--groups', 4000),
    // Rounds of (raw ceiling, processors), back to back; medians are reported (see measureProcessors).
    rounds: option(args, '--rounds', 3),
    // How long the steady 5,000 steps/s of the latency figure lasts (10 s ≈ 1,560 groups: its p99 is the 16 slowest).
    latencySeconds: option(args, '--latency-seconds', 10),
    // Seconds at that rate before the measured ones (start-up is not steady; see processorsLatency).
    warmUpSeconds: option(args, '--warm-up-seconds', 5),
  };
}

export type ProcessorsResult = Awaited<ReturnType<typeof measureProcessors>>;

const µs = (process: number, broker: number | null) => `${process.toFixed(1)}${broker === null ? '' : ` + ${broker.toFixed(1)} broker`}`;

/** One line per round: the three rates, their ratios, and the CPU per step of each beside the budget. */
export function roundLines(result: ProcessorsResult): string[] {
  return result.rounds.map(
    (r, i) =>
      `  round ${i + 1}: raw ${fmt(r.rawStepsPerSecond)} events/s, exactly-once copy ${fmt(r.copyStepsPerSecond)} steps/s, processors ${fmt(r.stepsPerSecond)} steps/s, ratio ${r.ratio.toFixed(2)} (to the copy ${r.ratioToCopy.toFixed(2)}); CPU µs per step: raw ${µs(r.rawCpuMicrosPerEvent, r.rawBrokerCpuMicrosPerEvent)}, copy ${µs(r.copyCpuMicrosPerStep, r.copyBrokerCpuMicrosPerStep)}, processors ${µs(r.processorsCpuMicrosPerStep, r.brokerCpuMicrosPerStep)}${r.mainThreadCpuMicrosPerStep === null ? '' : ` (main thread ${r.mainThreadCpuMicrosPerStep.toFixed(1)})`}; ${TARGET_RATIO} of raw leaves ${r.budgetMicrosPerStep.toFixed(1)}`,
  );
}

/** The throughput medians, and the CPU per step against the budget the target leaves. */
export function throughputLines(result: ProcessorsResult, rounds: number, groups: number): string[] {
  const broker = result.brokerCpuMicrosPerStep === null ? "not measured (not trajflow's broker)" : `${result.brokerCpuMicrosPerStep.toFixed(1)} µs`;
  const main =
    result.mainThreadCpuMicrosPerStep === null
      ? ''
      : ` (main thread ${result.mainThreadCpuMicrosPerStep.toFixed(1)} µs, other threads ${(result.processorsCpuMicrosPerStep - result.mainThreadCpuMicrosPerStep).toFixed(1)} µs)`;
  // The budget line: what the target allows per step on these cores, beside what each side spent (cpu-budget.ts).
  const total = (process: number, broker: number | null) => (broker === null ? `${process.toFixed(1)} µs (broker not measured)` : `${(process + broker).toFixed(1)} µs`);
  return [
    `raw kafkajs produce→consume: ${fmt(result.rawStepsPerSecond)} events/s (median of ${rounds} rounds)`,
    `processors steps→samples (${groups} groups of 8 × 4 steps, GRPO, exactly-once): ${fmt(result.processorsStepsPerSecond)} steps/s (median)`,
    `ratio processors/raw: ${result.ratio.toFixed(2)} (median of the rounds' ratios; target ≥ ${TARGET_RATIO.toFixed(2)})`,
    `exactly-once copy (the processors' reads and transactional writes of ≈ 2× the bytes, no decode, no processing): ${fmt(result.copyStepsPerSecond)} steps/s (median), ${result.copyRatio.toFixed(2)} of raw; processors/copy ${result.ratioToCopy.toFixed(2)}; CPU per step ${result.copyCpuMicrosPerStep.toFixed(1)} µs`,
    `CPU per step in the throughput windows (medians): processors (this process) ${result.processorsCpuMicrosPerStep.toFixed(1)} µs${main}, broker ${broker}`,
    `CPU budget: ${TARGET_RATIO} of the raw ceiling on ${result.cores} cores leaves ${result.budgetMicrosPerStep.toFixed(1)} µs per step for everything (median); spent per step, process + broker: raw ${total(result.rawCpuMicrosPerEvent, result.rawBrokerCpuMicrosPerEvent)} per event, exactly-once copy ${total(result.copyCpuMicrosPerStep, result.copyBrokerCpuMicrosPerStep)}, processors ${total(result.processorsCpuMicrosPerStep, result.brokerCpuMicrosPerStep)}`,
  ];
}

/** The latency of the measured groups and of every group, and the phases of their transactions. */
export function latencyLines(result: ProcessorsResult): string[] {
  const { latency } = result;
  const { whole } = latency;
  const { count, phases } = latency.transactions;
  const phase = (name: string, q: { p50Ms: number; p99Ms: number }) => `${name} ${q.p50Ms.toFixed(1)} / ${q.p99Ms.toFixed(1)}`;
  return [
    `latency last step → samples readable at ${fmt(latency.stepsPerSecond)} steps/s, ${latency.groups} groups after ${latency.warmUpSeconds} s of warm-up: p50 ${latency.p50Ms.toFixed(0)} ms, p99 ${latency.p99Ms.toFixed(0)} ms, max ${latency.maxMs.toFixed(0)} ms (target p99 ≤ 200 ms)`,
    `  every group, the warm-up's included (${whole.groups}): p50 ${whole.p50Ms.toFixed(0)} ms, p99 ${whole.p99Ms.toFixed(0)} ms, max ${whole.maxMs.toFixed(0)} ms`,
    `its ${count} transactions, p50 / p99 ms of each step: ${phase('begin', phases.beginMs)}, ${phase('sendBatch', phases.sendMs)}, ${phase('sendOffsets (the rest once the produce returned)', phases.offsetsMs)}, ${phase('commit', phases.commitMs)}; the hand-over to the producers' worker thread and back ${phase('', phases.handOffMs).trim()}`,
  ];
}
