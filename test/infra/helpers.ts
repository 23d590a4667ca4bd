// Shared by the infra integration tests: private configs (own home and ports) so lifecycle tests never touch
// the services teammates use, free ports, and the pid of a process that is certainly dead.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { isListening } from '../../infra/process.js';

export const uniqueSuffix = (): string => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

/**
 * Ports for services a test starts later, in another process: outside the kernel's ephemeral range, where any
 * client socket (a Kafka connection of another test file, say) may take a port as its local end at any moment
 * and make the service's bind fail (ClickHouse: "Address already in use"; seen once in CI with 42000–62000).
 */
function candidateRange(): [number, number] {
  let low = 32768;
  let high = 60999;
  try {
    [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  } catch {
    // not Linux: the usual range
  }
  if (low > 21000) return [20000, low];
  return [high + 1, 65536];
}

/** Whether a loopback listener can bind the port right now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on or holds, outside the ephemeral range (and so off the default config's ports' way). */
export async function freePort(avoid: readonly number[] = []): Promise<number> {
  const [from, to] = candidateRange();
  for (;;) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (!avoid.includes(port) && !(await isListening(port)) && (await canBind(port))) return port;
  }
}

/** A config with its own TRAJFLOW_HOME and ports; the jar cache is shared so nothing is downloaded again. */
export async function privateConfig(extra: Record<string, string> = {}): Promise<TrajflowConfig> {
  const home = mkdtempSync(join(tmpdir(), 'trajflow-infra-'));
  const ports: number[] = [];
  for (let i = 0; i < 4; i += 1) ports.push(await freePort(ports));
  return loadConfig({
    ...process.env,
    TRAJFLOW_KAFKA_BROKERS: '',
    TRAJFLOW_CLICKHOUSE_URL: '',
    TRAJFLOW_HOME: home,
    TRAJFLOW_KAFKA_PORT: String(ports[0]),
    TRAJFLOW_KAFKA_CONTROLLER_PORT: String(ports[1]),
    TRAJFLOW_CLICKHOUSE_HTTP_PORT: String(ports[2]),
    TRAJFLOW_CLICKHOUSE_TCP_PORT: String(ports[3]),
    ...extra,
  });
}

/** The pid of a process that has exited (and been reaped). */
export function deadPid(): number {
  const result = spawnSync('sh', ['-c', 'echo $$']);
  return Number(result.stdout.toString().trim());
}
