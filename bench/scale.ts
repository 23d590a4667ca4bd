// `trajflow bench scale`: the processors scaled out over processes. One run measures 1, 2 and 4
// `trajflow processors` processes (one consumer group, a steps topic of 8 partitions) on the same
// workload, each configuration on topics of its own: steps/s from the first step published to the last
// sample readable (read_committed), and correctness — every episode exactly one sample, no duplicates.
// The processes are started and have joined their group before the clock starts. Beside the rate, the CPU
// the processes and the managed broker spent in the same window, per step (scale-cpu.ts): on a machine
// with fewer cores than processes the rate cannot grow, but CPU per step shows what coordination costs.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../core/config.js';
import { ensureUp } from '../infra/up.js';
import { ensureTopics } from '../infra/topics.js';
import type { Admin } from 'kafkajs';
import { connectBackbone, StepPublisher, type Backbone } from '../streams/index.js';
import { groupSteps } from './load/episodes.js';
import { fmt, option } from './args.js';
import { PROCESSORS_NODE_FLAGS } from '../infra/node-flags.mjs';
import { emitResult } from './results-file.js';
import { cpuPerStepRatio } from './scale-cpu.js';
import { cpuSpent, windowFigures, withTransactions, type CpuReading, type ScaleResult, type WindowFigures } from './scale-window.js';
import { kafkaCpuMs, pidCpuMs } from './server-cpu.js';

const CLI = fileURLToPath(new URL('../bin/trajflow.mjs', import.meta.url));
const GROUP_SIZE = 8;
const EPISODE_LENGTH = 4;
const PARTITIONS = 8;
/**
 * Groups each process gets before the measured window, so that V8 has optimised the pipeline's slowly-heating
 * per-batch and per-transaction paths before the clock starts (what shorter warm-ups left in the window:
 * docs/results/benchmarks.md#bench-scale).
 */
const WARM_UP_GROUPS_PER_PROCESS = 1500;

async function measure(backbone: Backbone, processes: number, groups: number, warmUpGroups: number, log: (line: string) => void): Promise<ScaleResult> {
  const config: TrajflowConfig = { ...loadConfig(), topicPrefix: `bench.scale.${processes}.${randomUUID().slice(0, 8)}` };
  await ensureTopics(config);
  const admin = backbone.kafka.admin();
  await admin.connect();
  const group = `${config.topicPrefix}.processors`;
  const fleet: Fleet = { children: [], logs: [] };
  let result: WindowFigures;
  try {
    await admin.createPartitions({ topicPartitions: [{ topic: topicName(config, 'env.steps'), count: PARTITIONS }] });
    startProcessorProcesses(config, processes, group, fleet);
    await waitForGroup(admin, group, processes);
    // Warm-up, outside the window: every process compiles its hot paths (V8's JIT) on steps of its own first, so
    // the window measures the steady state, not each process's start-up (paid once per process: 4× with 4).
    const publisher = new StepPublisher(backbone.producer, topicName(config, 'env.steps'));
    const warmGroups = warmUpGroups * processes;
    await publisher.publishAll(groupSteps(`warm-${randomUUID().slice(0, 6)}`, warmGroups, GROUP_SIZE, EPISODE_LENGTH));
    const warmed = await countSamples(backbone, config, warmGroups * GROUP_SIZE, () => undefined);
    if (warmed.distinct < warmGroups * GROUP_SIZE) throw new Error(`${processes} processors did not finish the warm-up (${warmed.distinct} of ${warmGroups * GROUP_SIZE} samples)`);
    log(`${processes} process(es) joined and warmed up; publishing ${groups * GROUP_SIZE * EPISODE_LENGTH} steps`);
    result = await measureWindow({ backbone, config, publisher, children: fleet.children, processes, groups, warmGroups, warmedSamples: warmed.distinct, log });
  } finally {
    for (const child of fleet.children) child.kill('SIGTERM');
    await Promise.all(fleet.children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve)))));
    await admin.disconnect();
  }
  return withTransactions(result, transactionsOf(fleet.logs));
}

/** The processor processes of a configuration and their log files. */
interface Fleet {
  readonly children: ChildProcess[];
  readonly logs: string[];
}

/** Starts `processes` processor processes in one consumer group, added to `fleet` one by one (so a failed start still stops the others). */
function startProcessorProcesses(config: TrajflowConfig, processes: number, group: string, fleet: Fleet): void {
  mkdirSync(join(config.home, 'logs'), { recursive: true });
  for (let i = 0; i < processes; i++) {
    // Each process's output in a log of its own: what to read when a configuration misses samples.
    fleet.logs.push(join(config.home, 'logs', `bench-scale-${processes}-${i}.log`));
    const logFd = openSync(fleet.logs[i]!, 'w');
    fleet.children.push(
      spawn(process.execPath, [...PROCESSORS_NODE_FLAGS, CLI, 'processors', '--instance', String(i), '--group-size', String(GROUP_SIZE), '--consumer-group', group], {
        env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: config.topicPrefix },
        stdio: ['ignore', logFd, logFd],
      }),
    );
    closeSync(logFd);
  }
}

/** Waits until every process is a member of the (stable) group. */
async function waitForGroup(admin: Admin, group: string, processes: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${processes} processors did not all join group ${group} within 120 s`);
    const {
      groups: [described],
    } = await admin.describeGroups([group]);
    if (described && described.state === 'Stable' && described.members.length === processes) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** What the measured window is run with. */
interface Window {
  readonly backbone: Backbone;
  readonly config: TrajflowConfig;
  readonly publisher: StepPublisher;
  readonly children: readonly ChildProcess[];
  readonly processes: number;
  readonly groups: number;
  /** Warm-up groups of all the processes together, and their distinct samples. */
  readonly warmGroups: number;
  readonly warmedSamples: number;
  readonly log: (line: string) => void;
}

/** The measured window: the groups published, counted until their last sample, with the CPU spent between. */
async function measureWindow(w: Window): Promise<WindowFigures> {
  const { backbone, config, children, groups, warmGroups } = w;
  const steps = groupSteps(`scale-${randomUUID().slice(0, 6)}`, groups, GROUP_SIZE, EPISODE_LENGTH);
  const cpuAtStart = cpuReading(config, children);
  const started = performance.now();
  await w.publisher.publishAll(steps);
  // The samples topic holds the warm-up's too: counted from the beginning, they are found first.
  const expected = (groups + warmGroups) * GROUP_SIZE;
  // The window ends at the last new sample (all of them, or the last before a stall); the CPU is read within POLL_MS
  // of it (/proc counts in 10 ms ticks).
  let cpuAtEnd = cpuAtStart;
  let endedAt = performance.now();
  const counts = await countSamples(backbone, config, expected, (lastSampleAt) => {
    cpuAtEnd = cpuReading(config, children);
    endedAt = lastSampleAt;
  });
  if (counts.distinct < expected)
    w.log(`${w.processes} process(es): ${expected - counts.distinct} samples missing; the processes' logs: ${join(config.home, 'logs', `bench-scale-${w.processes}-*.log`)}`);
  const window = { processes: w.processes, groups, warmGroups, steps: steps.length, seconds: (endedAt - started) / 1000, warmedSamples: w.warmedSamples };
  return windowFigures(window, counts, cpuSpent(cpuAtStart, cpuAtEnd), GROUP_SIZE);
}

/**
 * The steps read and transactions of the processes over their lives (warm-up included), from the line each prints
 * when it stops (processors/pipeline/command.ts); null when one is missing.
 */
function transactionsOf(logs: readonly string[]): { transactions: number; stepsRead: number } | null {
  const sum = { transactions: 0, stepsRead: 0 };
  for (const path of logs) {
    const found = /processors: stopped after (\d+) steps read, (\d+) transactions/.exec(readFileSync(path, 'utf8'));
    if (!found) return null;
    sum.stepsRead += Number(found[1]);
    sum.transactions += Number(found[2]);
  }
  return sum;
}

/** CPU ms so far of each processor process and of the managed broker (null when it is not trajflow's own). */
function cpuReading(config: TrajflowConfig, children: readonly ChildProcess[]): CpuReading {
  const processesMs = children.map((child) => {
    const ms = child.pid === undefined ? null : pidCpuMs(child.pid);
    if (ms === null) throw new Error(`cannot read the CPU time of processor process ${child.pid} from /proc (Linux only; did it exit?)`);
    return ms;
  });
  return { processesMs, brokerMs: kafkaCpuMs(config) };
}

/** A configuration whose samples stop coming for this long is reported with what is missing, instead of waited on forever. */
const STALL_MS = 60_000;

/** How often the count is checked, and `progress` called when new samples came: not per sample, so the bench's /proc reads do not starve the processes it measures (docs/results/benchmarks.md#bench-scale). */
const POLL_MS = 20;

/**
 * Reads the samples topic (read_committed) until `expected` distinct samples arrived (or none came for
 * STALL_MS), calling `progress` with the time of the newest sample at most every POLL_MS while new ones come;
 * then 2 s more to catch duplicates.
 */
async function countSamples(backbone: Backbone, config: TrajflowConfig, expected: number, progress: (lastSampleAt: number) => void): Promise<{ total: number; distinct: number }> {
  const consumer = backbone.kafka.consumer({ groupId: `bench-scale-count-${randomUUID()}`, maxWaitTimeInMs: 100 });
  const ids = new Set<string>();
  let total = 0;
  let reachedAt = 0;
  let lastAt = performance.now();
  await consumer.connect();
  await consumer.subscribe({ topics: [topicName(config, 'samples')], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const sample = backbone.codec.decode('sample', message.value!);
      total++;
      if (ids.has(sample.sampleId)) return;
      ids.add(sample.sampleId);
      lastAt = performance.now();
      if (ids.size >= expected && reachedAt === 0) reachedAt = lastAt;
    },
  });
  let reported = 0;
  const report = () => {
    if (ids.size === reported) return;
    reported = ids.size;
    progress(lastAt);
  };
  while (reachedAt === 0) {
    report();
    if (performance.now() - lastAt > STALL_MS) {
      console.error(`bench: no sample for ${STALL_MS / 1000} s with ${ids.size} of ${expected}: counted as missing`);
      reachedAt = lastAt;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  report();
  const at = { total, distinct: ids.size };
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await consumer.disconnect();
  return { total: Math.max(total, at.total), distinct: ids.size };
}

export async function runScaleBench(args: string[]): Promise<number> {
  const groups = option(args, '--groups', 2400);
  const warmUpGroups = option(args, '--warm-up-groups', WARM_UP_GROUPS_PER_PROCESS);
  const config = loadConfig();
  await ensureUp(config);
  const backbone = await connectBackbone(config, { clientId: 'trajflow-bench-scale' });
  try {
    const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version };
    const results: ScaleResult[] = [];
    for (const processes of [1, 2, 4]) results.push(await measure(backbone, processes, groups, warmUpGroups, (line) => console.error(`bench: ${line}`)));
    console.log(
      `machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}; steps topic with ${PARTITIONS} partitions, ${groups} groups of ${GROUP_SIZE} × ${EPISODE_LENGTH} steps after ${warmUpGroups} groups per process to warm up`,
    );
    const micros = (seconds: number | null) => (seconds === null ? '–' : `${(seconds * 1e6).toFixed(0)} µs`);
    for (const r of results) {
      console.log(
        `${r.processes} process(es): ${fmt(r.stepsPerSecond)} steps/s (${r.steps} steps in ${r.seconds.toFixed(1)} s); CPU per step ${micros(r.cpuSecondsPerStep)} ` +
          `(processes ${micros(r.processesCpuSecondsPerStep)}, broker ${micros(r.brokerCpuSecondsPerStep)}); samples ${r.distinctSamples}/${r.expectedSamples}, duplicates ${r.duplicates}, missing ${r.missing}; ` +
          `${r.transactions ?? '?'} transactions (${r.stepsPerTransaction === null ? '?' : r.stepsPerTransaction.toFixed(1)} steps each)`,
      );
    }
    const ratio = results[2]!.stepsPerSecond / results[0]!.stepsPerSecond;
    const cpuRatio = cpuPerStepRatio(results[0]!, results[2]!);
    console.log(`ratio 4 processes / 1 process: ${ratio.toFixed(2)} × the steps/s, ${cpuRatio.toFixed(2)} × the CPU per step`);
    emitResult(args, { bench: 'scale', machine, partitions: PARTITIONS, groups, warmUpGroupsPerProcess: warmUpGroups, results, ratio4to1: ratio, cpuPerStepRatio4to1: cpuRatio });
    return results.every((r) => r.duplicates === 0 && r.missing === 0) ? 0 : 1;
  } finally {
    await backbone.close();
    // Only now: a kafkajs producer that wrote to a topic retries forever once it is deleted (bench/backbone.ts).
    const admin = backbone.kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: (await admin.listTopics()).filter((t) => t.startsWith('bench.scale.')) }).catch(() => undefined);
    await admin.disconnect();
  }
}
