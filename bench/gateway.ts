// `trajflow bench gateway [--api chat|responses|messages] [--rate 200] [--seconds 10] [--rounds 3]
// [--compare-single-instance] [--json]`: what the gateway adds to a call. An upstream process answers at once in
// vLLM's shape (bench/load/vllm-stub-entry.mjs); the gateway runs as its own process, as a user starts it
// (`trajflow gateway --upstream URL`); each round sends calls at a fixed rate (open loop: a call is sent on
// schedule whether or not the previous ones have answered) first to the upstream alone (chat completions, what the
// gateway asks it), then through the gateway on the chosen API as its client sends it (gateway-apis.ts), whose
// every answer waits for Kafka's acknowledgement of its step, and with --compare-single-instance through a second
// gateway started with --single-instance (no per-call read barrier). The load comes from this process on undici's
// request API (cheaper than fetch, the same for every phase). The added latency is the gateway's percentile minus
// the upstream's, per round; each answer's Server-Timing header says where the gateway's time went
// (gateway-attribution.ts); recordedPerCall is the steps on the bench's topic over the calls the gateways
// answered (their /health), 1 when none is lost. The broker, the upstream, the gateways and the load share the
// machine's cores: the figures hold for a machine shared that way.
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { loadConfig, topicName } from '../core/config.js';
import { ensureUp } from '../infra/up.js';
import { freePort } from '../infra/free-port.js';
import { waitUntil } from '../infra/process.js';
import { connectBackbone } from '../streams/index.js';
import { option } from './args.js';
import { parseServerTiming } from '../gateway/call-timing.js';
import { apiCall, gatewayApiOf, type ApiCall, type GatewayApi } from './gateway-apis.js';
import { attribution, attributionLine, medianAttribution, type Attribution, type TimedCall } from './gateway-attribution.js';
import { median } from './median.js';
import { emitResult } from './results-file.js';

const STUB = fileURLToPath(new URL('./load/vllm-stub-entry.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../bin/trajflow.mjs', import.meta.url));
const UPSTREAM_CALL = apiCall('chat');

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface Phase {
  readonly answered: number;
  readonly failed: number;
  readonly callsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** A phase's figures, and each answered call's latency beside the phases its Server-Timing header names (none from the upstream alone). */
interface Measured {
  readonly phase: Phase;
  readonly calls: TimedCall[];
}

/** Sends `rate` calls a second for `seconds` of `call` to `base`, each on its schedule; latencies of the answered ones. */
async function phase(agent: Agent, base: string, call: ApiCall, rate: number, seconds: number, headers: (i: number) => Record<string, string>): Promise<Measured> {
  const url = `${base}${call.path}`;
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  const timed: TimedCall[] = [];
  let failed = 0;
  const started = performance.now();
  const calls: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    calls.push(
      request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json', ...call.headers, ...headers(i) }, body: call.body }).then(
        async (response) => {
          await response.body.arrayBuffer();
          if (response.statusCode !== 200) return void failed++;
          const latencyMs = performance.now() - sent;
          latencies.push(latencyMs);
          const timing = parseServerTiming(response.headers['server-timing'] as string | undefined);
          if (timing) timed.push({ latencyMs, timing });
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(calls);
  const elapsedS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    phase: { answered: latencies.length, failed, callsPerSec: latencies.length / elapsedS, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99) },
    calls: timed,
  };
}

async function startStub(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [STUB], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(Number(/listening (\d+)/.exec(chunk.toString())?.[1])));
    child.once('exit', (code) => reject(new Error(`the bench's upstream exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/v1`, stop: () => void child.kill('SIGTERM') };
}

/** `trajflow gateway` in front of the stub, on the bench's topic prefix; resolves once it answers /health. */
async function startGatewayProcess(upstream: string, prefix: string, rate: number, extra: readonly string[] = []): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const args = [
    'gateway',
    '--upstream',
    upstream,
    '--model-name',
    'stub',
    '--port',
    String(port),
    '--run-id',
    'bench-gateway',
    '--calls-per-second',
    String(rate * 10),
    '--burst',
    String(rate * 10),
    ...extra,
  ];
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: prefix }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const health = async () => {
    const response = await request(`${url}/health`);
    await response.body.text();
    return response.statusCode === 200;
  };
  const outcome = await waitUntil(health, { timeoutMs: 120_000, intervalMs: 200, giveUp: () => (child.exitCode === null ? undefined : `exited with ${child.exitCode}`) });
  if (outcome !== 'ok') throw new Error(`the gateway did not answer /health (${outcome === 'timeout' ? 'within 120 s' : outcome}):\n${stderr}`);
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function runGatewayBench(args: string[]): Promise<number> {
  const api = gatewayApiOf(args);
  const rate = option(args, '--rate', 200);
  const seconds = option(args, '--seconds', 10);
  const rounds = option(args, '--rounds', 3);
  const compare = args.includes('--compare-single-instance');
  const base = loadConfig();
  await ensureUp(base);
  const config = { ...base, topicPrefix: `bench-gateway-${Date.now().toString(36)}` };
  const backbone = await connectBackbone(base, { clientId: 'trajflow-bench-gateway' });
  const admin = backbone.kafka.admin();
  await admin.connect();
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: null });
  const stub = await startStub();
  const gateways: Array<{ url: string; stop: () => Promise<void> }> = [];
  try {
    gateways.push(await startGatewayProcess(stub.url, config.topicPrefix, rate));
    if (compare) gateways.push(await startGatewayProcess(stub.url, config.topicPrefix, rate, ['--single-instance']));
    const urls = { upstream: stub.url, gateway: gateways[0]!.url, single: gateways[1]?.url };
    const results = await gatewayRounds(agent, urls, api, { rate, seconds, rounds });
    let answered = 0;
    for (const gateway of gateways) answered += ((await (await request(`${gateway.url}/health`, { dispatcher: agent })).body.json()) as { answeredCalls: number }).answeredCalls;
    const offsets = await admin.fetchTopicOffsets(topicName(config, 'env.steps'));
    const recorded = offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
    const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, loadAverage: loadavg().map((l) => Number(l.toFixed(2))) };
    const summary = gatewaySummary({ machine, api, rate, seconds }, results, answered, recorded);
    console.log(summaryLine(summary, rounds));
    emitResult(args, summary, api);
    return 0;
  } finally {
    for (const gateway of gateways) await gateway.stop();
    stub.stop();
    await agent.close();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
    await admin.disconnect();
    await backbone.close();
  }
}

/** A gateway's phase of a round beside the upstream alone: the added latency and where its time went. */
export interface ThroughGateway {
  readonly gateway: Phase;
  readonly addedP50Ms: number;
  readonly addedP99Ms: number;
  readonly attribution: Attribution | null;
}

export interface GatewayRound extends ThroughGateway {
  readonly upstream: Phase;
  /** The same calls through a gateway started with --single-instance (no per-call read barrier), when compared. */
  readonly singleInstance?: ThroughGateway;
}

type Urls = { upstream: string; gateway: string; single: string | undefined };

/** A warm-up, then each round: the upstream alone, then through the gateway on `api` (and the single-instance one), at the same rate. */
async function gatewayRounds(agent: Agent, urls: Urls, api: GatewayApi, { rate, seconds, rounds }: { rate: number; seconds: number; rounds: number }): Promise<GatewayRound[]> {
  const episode = (tag: string) => (i: number) => ({ 'x-trajflow-episode': `${tag}-c${i}`, 'x-trajflow-group': `${tag}-g${Math.floor(i / 8)}` });
  const upstreamBase = urls.upstream.replace(/\/v1$/, '');
  // Warm-up: connections, the producer's metadata, and the JIT, long enough that the first round's p99 does not
  // hold the gateway's compilation (docs/results/benchmarks.md#bench-gateway).
  await phase(agent, upstreamBase, UPSTREAM_CALL, rate, 1, () => ({}));
  await phase(agent, urls.gateway, apiCall(api), rate, 3, episode('w'));
  if (urls.single) await phase(agent, urls.single, apiCall(api), rate, 3, episode('ws'));
  const results: GatewayRound[] = [];
  for (let round = 0; round < rounds; round++) {
    const upstream = await phase(agent, upstreamBase, UPSTREAM_CALL, rate, seconds, () => ({}));
    const through = await phase(agent, urls.gateway, apiCall(api), rate, seconds, episode(`r${round}`));
    const single = urls.single ? await phase(agent, urls.single, apiCall(api), rate, seconds, episode(`s${round}`)) : undefined;
    const result = gatewayRound(upstream.phase, through.phase, through.calls, single);
    results.push(result);
    console.error(roundLine(round, upstream.phase, through.phase));
    if (result.attribution) console.error(`bench: round ${round + 1}: ${attributionLine(result.attribution)}`);
    if (result.singleInstance)
      console.error(
        `bench: round ${round + 1}: --single-instance p50 ${result.singleInstance.gateway.p50Ms.toFixed(2)} ms p99 ${result.singleInstance.gateway.p99Ms.toFixed(2)} ms`,
      );
  }
  return results;
}

function through(upstream: Phase, gateway: Phase, calls: readonly TimedCall[]): ThroughGateway {
  return { gateway, addedP50Ms: gateway.p50Ms - upstream.p50Ms, addedP99Ms: gateway.p99Ms - upstream.p99Ms, attribution: attribution(calls) };
}

export function gatewayRound(upstream: Phase, gateway: Phase, calls: readonly TimedCall[] = [], single?: Measured): GatewayRound {
  return { upstream, ...through(upstream, gateway, calls), ...(single ? { singleInstance: through(upstream, single.phase, single.calls) } : {}) };
}

/** A round's progress line. */
export function roundLine(round: number, upstream: Phase, through: Phase): string {
  return `bench: round ${round + 1}: upstream alone p50 ${upstream.p50Ms.toFixed(2)} ms p99 ${upstream.p99Ms.toFixed(2)} ms; through the gateway ${through.callsPerSec.toFixed(0)} calls/s p50 ${through.p50Ms.toFixed(2)} ms p99 ${through.p99Ms.toFixed(2)} ms (${through.failed} failed)`;
}

/** The medians over rounds of a gateway's figures. */
function medians(rounds: readonly ThroughGateway[]) {
  const of = (pick: (r: ThroughGateway) => number) => median(rounds.map(pick));
  return {
    gatewayP50Ms: of((r) => r.gateway.p50Ms),
    gatewayP99Ms: of((r) => r.gateway.p99Ms),
    addedP50Ms: of((r) => r.addedP50Ms),
    addedP99Ms: of((r) => r.addedP99Ms),
    attribution: medianAttribution(
      rounds.map((r) => r.attribution),
      median,
    ),
  };
}

/** The result: the medians over the rounds, and the steps recorded per call the gateways answered. */
export function gatewaySummary(run: { machine: object; api: GatewayApi; rate: number; seconds: number }, results: GatewayRound[], answered: number, recorded: number) {
  const of = (pick: (r: GatewayRound) => number) => median(results.map(pick));
  const { gatewayP50Ms, gatewayP99Ms, addedP50Ms, addedP99Ms, attribution: where } = medians(results);
  const singles = results.map((r) => r.singleInstance).filter((r): r is ThroughGateway => r !== undefined);
  return {
    bench: 'gateway',
    api: run.api,
    machine: run.machine,
    rate: run.rate,
    seconds: run.seconds,
    rounds: results,
    callsPerSec: of((r) => r.gateway.callsPerSec),
    upstreamP50Ms: of((r) => r.upstream.p50Ms),
    upstreamP99Ms: of((r) => r.upstream.p99Ms),
    gatewayP50Ms,
    gatewayP99Ms,
    addedP50Ms,
    addedP99Ms,
    attribution: where,
    ...(singles.length > 0 ? { singleInstance: medians(singles) } : {}),
    answeredCalls: answered,
    recordedSteps: recorded,
    recordedPerCall: answered === 0 ? 0 : recorded / answered,
  };
}

/** The verdict line, on the medians of `rounds` rounds. */
export function summaryLine(s: ReturnType<typeof gatewaySummary>, rounds: number): string {
  const single = s.singleInstance ? `; --single-instance added p50 ${s.singleInstance.addedP50Ms.toFixed(2)} ms, p99 ${s.singleInstance.addedP99Ms.toFixed(2)} ms` : '';
  return `gateway (${s.api}) at ${s.rate} calls/s: ${s.callsPerSec.toFixed(0)} calls/s answered, added latency p50 ${s.addedP50Ms.toFixed(2)} ms, p99 ${s.addedP99Ms.toFixed(2)} ms (median of ${rounds} rounds; target p99 ≤ 20 ms)${single}; ${s.recordedSteps} steps for ${s.answeredCalls} answered calls (${s.recordedPerCall} per call)`;
}
