// CPU time of the managed servers (Kafka, ClickHouse) from /proc, so a bench can say how much of the
// machine each side of a measurement used: on the 2-core VM they share the cores with the code measured.
import { readFileSync } from 'node:fs';
import type { TrajflowConfig } from '../core/config.js';
import { clickHousePaths } from '../infra/clickhouse/server.js';
import { kafkaPaths } from '../infra/kafka/server.js';

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

export const clickHouseCpuMs = (config: TrajflowConfig): number | null => cpuMsOf(clickHousePaths(config).pidFile);

export const kafkaCpuMs = (config: TrajflowConfig): number | null => cpuMsOf(kafkaPaths(config).pidFile);
