// CPU time of the managed servers (Kafka, ClickHouse) from /proc, so a bench can say how much of the
// machine each side of a measurement used: on the 2-core VM they share the cores with the code measured.
import { readFileSync } from 'node:fs';
import type { TrajflowConfig } from '../core/config.js';
import { clickHousePaths } from '../infra/clickhouse/server.js';
import { kafkaPaths } from '../infra/kafka/server.js';

/** CPU ms (user + system) the process of a pid file has used so far (100 ticks a second), or null when there is none to read. */
function cpuMsOf(pidFile: string): number | null {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

export const clickHouseCpuMs = (config: TrajflowConfig): number | null => cpuMsOf(clickHousePaths(config).pidFile);

export const kafkaCpuMs = (config: TrajflowConfig): number | null => cpuMsOf(kafkaPaths(config).pidFile);
