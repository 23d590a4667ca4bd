// Processors throughput and latency, beside the raw backbone ceiling measured in the same run:
//  - throughput: N step events already on the steps topic → processors → samples, steps/s;
//  - latency: steps published at a steady rate; for each group, the time from its last step being
//    acknowledged by the broker to its samples being readable (read_committed), p50 and p99.
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../core/config.js';
import { deleteTopicsUnder, ensureTopics } from '../infra/topics.js';
import { startProcessors } from '../processors/pipeline/processor.js';
import type { TransactionPhases } from '../processors/exactly-once/transactional-emitter.js';
import { StepPublisher, type Backbone } from '../streams/index.js';
import { groupSteps } from './load/episodes.js';
import { rawThroughput } from './backbone.js';
import { exactlyOnceCopyThroughput } from './exactly-once-copy.js';
import { CpuMeter } from './server-cpu.js';
import { cpuBudgetMicrosPerStep } from './cpu-budget.js';
import { median, medianOrNull } from './median.js';
import { latencyPlan, latencyResult, type LatencyPlan, type LatencyResult } from './processors-latency.js';

const processing = { reward: { terms: [{ kind: 'env_return' as const }] }, estimator: { name: 'grpo' as const }, filters: [] };
const GROUP_SIZE = 8;
const EPISODE_LENGTH = 4;
const STEPS_PER_GROUP = GROUP_SIZE * EPISODE_LENGTH;

/** Every measurement of this process is under this prefix; deleteProcessorsBenchTopics drops them all. */
const RUN_PREFIX = `bench.processors.${randomUUID().slice(0, 8)}`;

async function isolated(backbone: Backbone): Promise<Backbone> {
  const config: TrajflowConfig = { ...loadConfig(), topicPrefix: `${RUN_PREFIX}.${randomUUID().slice(0, 8)}` };
  await ensureTopics(config);
  return { ...backbone, config };
}

/**
 * Publishes the groups' steps in slices, so that the bench holds no array of them while the processors run
 * in its process: a live heap of 10⁵ step events would be marked by every mark-compact of the processors
 * (in a deployment they are a process of their own). Returns the number of steps.
 */
async function publishGroups(backbone: Backbone, topic: string, groups: number): Promise<number> {
  const runId = `bench-${randomUUID().slice(0, 6)}`;
  const publisher = new StepPublisher(backbone.producer, topic);
  let count = 0;
  for (let first = 0; first < groups; first += 250) {
    const steps = groupSteps(runId, Math.min(250, groups - first), GROUP_SIZE, EPISODE_LENGTH, first);
    await publisher.publishAll(steps);
    count += steps.length;
  }
  return count;
}

/** The throughput window: steps/s, and the CPU per step of this process (the processors) and of the broker. */
export interface ThroughputResult {
  readonly stepsPerSecond: number;
  /** This process's CPU (user + system) per step, µs: the processors, with the bench's polling. */
  readonly processorsCpuMicrosPerStep: number;
  /** Of it, the main thread's (null off Linux); the rest is the producers' worker and V8's helper threads. */
  readonly mainThreadCpuMicrosPerStep: number | null;
  /** The managed broker's CPU per step, µs (null when the broker is not trajflow's own). */
  readonly brokerCpuMicrosPerStep: number | null;
}

/** Topics of their own with the groups' steps on their steps topic. */
async function stepsOnTopic(backbone: Backbone, groups: number): Promise<{ local: Backbone; stepCount: number }> {
  const local = await isolated(backbone);
  return { local, stepCount: await publishGroups(backbone, topicName(local.config, 'env.steps'), groups) };
}

export async function processorsThroughput(backbone: Backbone, groups: number): Promise<ThroughputResult> {
  const { local, stepCount } = await stepsOnTopic(backbone, groups);
  const handle = await startProcessors(local, { consumerGroupId: `bench-${randomUUID()}`, processing, groupSize: GROUP_SIZE });
  // The clock starts at the first step delivered, as the raw ceiling's starts after its consumer joined:
  // joining the group, reloading the marks and fencing the partitions' producers are start-up, not throughput.
  while (handle.consumer.stats.delivered === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  const meter = new CpuMeter(local.config);
  const start = process.hrtime.bigint();
  meter.start();
  while (handle.emitter.stats.samples < groups * GROUP_SIZE) await new Promise((resolve) => setTimeout(resolve, 10));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  meter.stop();
  await handle.close();
  const cpu = meter.perItem(stepCount);
  return {
    stepsPerSecond: stepCount / seconds,
    processorsCpuMicrosPerStep: cpu.processMicros,
    mainThreadCpuMicrosPerStep: cpu.mainThreadMicros,
    brokerCpuMicrosPerStep: cpu.brokerMicros,
  };
}

/**
 * Steps at a steady rate for warmUpSeconds + seconds; the figure is over the groups published after the
 * warm-up. Why a warm-up: the target is the latency at a steady rate, and the first seconds after a start
 * are not steady — the processors' code is still being compiled and each lane's first transaction adds its
 * partitions to the transaction (docs/results/processors.md#how-the-latency-is-measured). `whole` keeps every
 * group, so the cold start stays visible.
 */
export async function processorsLatency(backbone: Backbone, stepsPerSecond: number, seconds: number, warmUpSeconds = 5): Promise<LatencyResult> {
  const local = await isolated(backbone);
  const handle = await startProcessors(local, { consumerGroupId: `bench-${randomUUID()}`, processing, groupSize: GROUP_SIZE });
  while (handle.consumer.stats.rebalances === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const plan = latencyPlan(stepsPerSecond, seconds, warmUpSeconds, STEPS_PER_GROUP);
  const runId = `bench-${randomUUID().slice(0, 6)}`;
  const now = () => performance.timeOrigin + performance.now();
  const seen = { lastStepAcked: new Map<string, number>(), done: new Map<string, number>(), measured: new Set<string>(), phaseLog: [] as TransactionPhases[] };
  // A group's samples are readable once the transaction that wrote them has committed.
  const subscription = handle.emitter.committed$.subscribe((units) => {
    const at = now();
    for (const unit of units) for (const groupId of unit.sampleGroupIds) if (!seen.done.has(groupId)) seen.done.set(groupId, at);
  });
  const published = await publishAtRate(local.config.topicPrefix, runId, plan, (groupId, ackedAt) => {
    seen.lastStepAcked.set(groupId, ackedAt);
    // Groups are published in order: past the warm-up's, every group is measured, and so is every
    // transaction from the first measured group's ack on.
    if (seen.lastStepAcked.size > plan.warmUpGroups) {
      seen.measured.add(groupId);
      handle.emitter.phaseLog ??= seen.phaseLog;
    }
  });
  while (seen.done.size < plan.allGroups) await new Promise((resolve) => setTimeout(resolve, 5));
  subscription.unsubscribe();
  await handle.close();
  return latencyResult(plan, STEPS_PER_GROUP, warmUpSeconds, published, seen);
}

/**
 * Publishes the plan's groups from another process, as the actors' steps come: the load generator does not share
 * the processors' event loop (both processes read the same wall clock). `acked` hears each group's last step
 * acknowledged; resolves with the seconds the publishing took.
 */
function publishAtRate(topicPrefix: string, runId: string, plan: LatencyPlan, acked: (groupId: string, ackedAt: number) => void): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./latency-publisher.ts', import.meta.url)),
      runId,
      String(plan.allGroups),
      String(plan.intervalMs),
      String(GROUP_SIZE),
      String(EPISODE_LENGTH),
    ],
    {
      env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: topicPrefix },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  return new Promise<number>((resolve, reject) => {
    child.on('message', (message: { groupId?: string; ackedAt?: number; done?: boolean; seconds?: number }) => {
      if (message.groupId !== undefined) acked(message.groupId, message.ackedAt!);
      if (message.done) resolve(message.seconds!);
    });
    child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`the latency publisher exited with ${code}`))));
  });
}

/** Deletes the topics of every measurement this process made; call once their producers are closed. */
export async function deleteProcessorsBenchTopics(config: TrajflowConfig): Promise<void> {
  await deleteTopicsUnder(config, RUN_PREFIX);
}

/** The processors' throughput target, as a share of the raw ceiling (docs/results/processors.md). */
export const TARGET_RATIO = 0.5;

/** One round of the throughput comparison: the raw ceiling, the exactly-once copy, then the processors, back to back. */
export interface ProcessorsRound extends ThroughputResult {
  readonly rawStepsPerSecond: number;
  /** The raw ceiling's CPU per event, µs: the bench process (its producer and consumer) and the broker. */
  readonly rawCpuMicrosPerEvent: number;
  readonly rawBrokerCpuMicrosPerEvent: number | null;
  readonly ratio: number;
  /** The processors' Kafka I/O without processing (exactly-once-copy.ts), steps/s. */
  readonly copyStepsPerSecond: number;
  readonly copyCpuMicrosPerStep: number;
  readonly copyBrokerCpuMicrosPerStep: number | null;
  /**
   * µs of CPU per step, all threads and the broker together, that TARGET_RATIO of this round's raw ceiling
   * leaves on this machine's cores (cpu-budget.ts): above it, a side cannot reach the target here.
   */
  readonly budgetMicrosPerStep: number;
  /** processors / copy: the share of the I/O floor the processing leaves. */
  readonly ratioToCopy: number;
}

/**
 * Rounds of (raw ceiling, processors) back to back, then the latency. The throughput figures are medians
 * over the rounds, the ratio the median of the per-round ratios: on a shared machine the raw ceiling alone
 * moves widely from one measurement to the next (docs/results/processors.md#rounds), so a ratio of a raw
 * ceiling and a processors rate measured at different times says as much about the neighbours as about the
 * processors.
 */
export async function measureProcessors(
  backbone: Backbone,
  options: { groups: number; eventBytes: number; rounds?: number; latencySeconds?: number; warmUpSeconds?: number; progress: (line: string) => void },
) {
  const rounds: ProcessorsRound[] = [];
  for (let round = 1; round <= (options.rounds ?? 3); round++) {
    options.progress(`round ${round}: raw kafkajs ceiling`);
    const rawMeter = new CpuMeter(backbone.config);
    const raw = await rawThroughput(backbone.kafka, options.groups * STEPS_PER_GROUP, options.eventBytes, rawMeter);
    const rawCpu = rawMeter.perItem(options.groups * STEPS_PER_GROUP);
    options.progress(`round ${round}: exactly-once copy (the processors' Kafka I/O, no processing)`);
    const { local, stepCount } = await stepsOnTopic(backbone, options.groups);
    const copy = await exactlyOnceCopyThroughput(local, stepCount);
    options.progress(`round ${round}: processors throughput`);
    const throughput = await processorsThroughput(backbone, options.groups);
    rounds.push({
      rawStepsPerSecond: raw,
      rawCpuMicrosPerEvent: rawCpu.processMicros,
      rawBrokerCpuMicrosPerEvent: rawCpu.brokerMicros,
      ...throughput,
      ratio: throughput.stepsPerSecond / raw,
      copyStepsPerSecond: copy.stepsPerSecond,
      copyCpuMicrosPerStep: copy.cpu.processMicros,
      copyBrokerCpuMicrosPerStep: copy.cpu.brokerMicros,
      budgetMicrosPerStep: cpuBudgetMicrosPerStep(cpus().length, raw, TARGET_RATIO),
      ratioToCopy: throughput.stepsPerSecond / copy.stepsPerSecond,
    });
  }
  options.progress('latency at 5,000 steps/s');
  const latency = await processorsLatency(backbone, 5000, options.latencySeconds ?? 10, options.warmUpSeconds ?? 5);
  return {
    rounds,
    rawStepsPerSecond: median(rounds.map((r) => r.rawStepsPerSecond)),
    processorsStepsPerSecond: median(rounds.map((r) => r.stepsPerSecond)),
    ratio: median(rounds.map((r) => r.ratio)),
    copyStepsPerSecond: median(rounds.map((r) => r.copyStepsPerSecond)),
    copyRatio: median(rounds.map((r) => r.copyStepsPerSecond / r.rawStepsPerSecond)),
    ratioToCopy: median(rounds.map((r) => r.ratioToCopy)),
    copyCpuMicrosPerStep: median(rounds.map((r) => r.copyCpuMicrosPerStep)),
    copyBrokerCpuMicrosPerStep: medianOrNull(rounds.map((r) => r.copyBrokerCpuMicrosPerStep)),
    rawCpuMicrosPerEvent: median(rounds.map((r) => r.rawCpuMicrosPerEvent)),
    rawBrokerCpuMicrosPerEvent: medianOrNull(rounds.map((r) => r.rawBrokerCpuMicrosPerEvent)),
    budgetMicrosPerStep: median(rounds.map((r) => r.budgetMicrosPerStep)),
    cores: cpus().length,
    processorsCpuMicrosPerStep: median(rounds.map((r) => r.processorsCpuMicrosPerStep)),
    mainThreadCpuMicrosPerStep: medianOrNull(rounds.map((r) => r.mainThreadCpuMicrosPerStep)),
    brokerCpuMicrosPerStep: medianOrNull(rounds.map((r) => r.brokerCpuMicrosPerStep)),
    latency,
  };
}
