// CPU time of the managed servers (Kafka, ClickHouse) from /proc, so a bench can say how much of the
// machine each side of a measurement used: on a small machine they share the cores with the code measured.
import { readFileSync } from 'node:fs';
import type { TrajflowConfig } from '../core/config.js';
import { clickHousePaths } from '../infra/clickhouse/server.js';
import { kafkaNodes } from '../infra/kafka/server.js';

/** CPU ms (user + system) of a /proc stat file (100 ticks a second), or null when there is none to read. */
function statCpuMs(statFile: string): number | null {
  try {
    const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** CPU ms the process of a pid file has used so far, or null when there is none to read. */
function cpuMsOf(pidFile: string): number | null {
  try {
    return statCpuMs(`/proc/${Number(readFileSync(pidFile, 'utf8').trim())}/stat`);
  } catch {
    return null;
  }
}

/**
 * CPU ms the calling thread has used so far (Linux), or null elsewhere. From the main thread it splits a
 * process's CPU into the event loop's share and the rest (worker threads, V8's GC and compiler helpers).
 */
export const threadCpuMs = (): number | null => statCpuMs('/proc/thread-self/stat');

/** CPU ms (user + system, all threads) process `pid` has used so far, or null when it cannot be read (gone, or not Linux). */
export const pidCpuMs = (pid: number): number | null => statCpuMs(`/proc/${pid}/stat`);

export const clickHouseCpuMs = (config: TrajflowConfig): number | null => cpuMsOf(clickHousePaths(config).pidFile);

/** CPU ms of every node of the managed Kafka (one, or each of a `--brokers 3` cluster), or null when one cannot be read. */
export function kafkaCpuMs(config: TrajflowConfig): number | null {
  let sum = 0;
  for (const node of kafkaNodes(config)) {
    const ms = cpuMsOf(node.paths.pidFile);
    if (ms === null) return null;
    sum += ms;
  }
  return sum;
}

/** CPU a measured window used, µs per item: this process, its main thread, and the managed broker. */
export interface CpuPerItem {
  readonly processMicros: number;
  /** null off Linux. */
  readonly mainThreadMicros: number | null;
  /** null when the broker is not trajflow's own (no pid file to read). */
  readonly brokerMicros: number | null;
}

interface CpuReading {
  readonly process: NodeJS.CpuUsage;
  readonly mainMs: number | null;
  readonly brokerMs: number | null;
}

/**
 * The CPU of one throughput window: start() where its clock starts, stop() where it stops, then perItem.
 * Every bench side (the raw ceiling, the exactly-once copy, the processors) is metered the same way, so the
 * CPU each spends per step can be set beside the budget a target leaves (cpu-budget.ts).
 */
export class CpuMeter {
  private started: CpuReading | null = null;
  private spent: { processMicros: number; mainMs: number | null; brokerMs: number | null } | null = null;

  constructor(private readonly config: TrajflowConfig) {}

  start(): void {
    this.started = this.read();
  }

  stop(): void {
    if (this.started === null) throw new Error('CpuMeter.stop() before start()');
    const now = this.read();
    const { process: before, mainMs, brokerMs } = this.started;
    const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
    this.spent = {
      processMicros: now.process.user - before.user + now.process.system - before.system,
      mainMs: delta(now.mainMs, mainMs),
      brokerMs: delta(now.brokerMs, brokerMs),
    };
  }

  perItem(count: number): CpuPerItem {
    if (this.spent === null) throw new Error('CpuMeter.perItem() before stop()');
    const { processMicros, mainMs, brokerMs } = this.spent;
    return {
      processMicros: processMicros / count,
      mainThreadMicros: mainMs === null ? null : (1000 * mainMs) / count,
      brokerMicros: brokerMs === null ? null : (1000 * brokerMs) / count,
    };
  }

  private read(): CpuReading {
    return { process: process.cpuUsage(), mainMs: threadCpuMs(), brokerMs: kafkaCpuMs(this.config) };
  }
}
