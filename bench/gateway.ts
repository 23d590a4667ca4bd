// `trajflow bench gateway [--rate 200] [--seconds 10] [--rounds 3] [--json]`: what the gateway adds to a call.
// An upstream process answers at once in vLLM's shape (bench/load/vllm-stub-entry.mjs); each round sends calls at
// a fixed rate (open loop: a call is sent on schedule whether or not the previous ones have answered) first to the
// upstream alone, then through the gateway, whose every answer waits for Kafka's acknowledgement of its step. The
// added latency is the gateway's percentile minus the upstream's, per round; recordedPerCall is the steps on the
// bench's topic over the calls the gateway answered (1 when none is lost).
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName } from '../core/config.js';
import { ensureUp } from '../infra/commands.js';
import { ensureTopics, topicSpecs } from '../infra/topics.js';
import { connectBackbone, StepPublisher } from '../streams/index.js';
import { loadGatewayConfig } from '../gateway/config.js';
import { OpenAIUpstream } from '../gateway/openai-upstream.js';
import { startGateway } from '../gateway/server.js';
import { option } from './args.js';
import { median } from './median.js';
import { emitResult } from './results-file.js';

const STUB = fileURLToPath(new URL('./load/vllm-stub-entry.mjs', import.meta.url));
const BODY = JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: 'Where is the goal?' }], max_tokens: 4 });

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

interface Phase {
  readonly answered: number;
  readonly failed: number;
  readonly callsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Sends `rate` calls a second for `seconds` to `url`, each on its schedule; latencies of the answered ones. */
async function phase(url: string, rate: number, seconds: number, headers: (i: number) => Record<string, string>): Promise<Phase> {
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  const calls: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    calls.push(
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers(i) }, body: BODY }).then(
        async (response) => {
          await response.arrayBuffer();
          if (response.ok) latencies.push(performance.now() - sent);
          else failed++;
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(calls);
  const elapsedS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { answered: latencies.length, failed, callsPerSec: latencies.length / elapsedS, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99) };
}

async function startStub(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [STUB], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(Number(/listening (\d+)/.exec(chunk.toString())?.[1])));
    child.once('exit', (code) => reject(new Error(`the bench's upstream exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/v1`, stop: () => void child.kill('SIGTERM') };
}

export async function runGatewayBench(args: string[]): Promise<number> {
  const rate = option(args, '--rate', 200);
  const seconds = option(args, '--seconds', 10);
  const rounds = option(args, '--rounds', 3);
  const base = loadConfig();
  await ensureUp(base);
  const config = { ...base, topicPrefix: `bench-gateway-${Date.now().toString(36)}` };
  // The backbone on the configured prefix (its schemas topic exists); the steps go to the bench's own topic.
  const backbone = await connectBackbone(base, { clientId: 'trajflow-bench-gateway' });
  const admin = backbone.kafka.admin();
  await admin.connect();
  const stub = await startStub();
  try {
    await ensureTopics(
      config,
      admin,
      topicSpecs.filter((s) => s.name === 'env.steps'),
    );
    const gatewayConfig = loadGatewayConfig({ port: 0, upstream: stub.url, models: ['stub'], runId: 'bench-gateway', callsPerSecond: rate * 10, burst: rate * 10 }, {});
    const gateway = await startGateway({
      config: gatewayConfig,
      upstream: new OpenAIUpstream({ baseUrl: stub.url, models: ['stub'], timeoutMs: 30_000 }),
      steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')),
    });
    try {
      const episode = (round: number) => (i: number) => ({ 'x-trajflow-episode': `r${round}-c${i}`, 'x-trajflow-group': `r${round}-g${Math.floor(i / 8)}` });
      // Warm-up: connections, JIT, the producer's metadata.
      await phase(`${stub.url}/chat/completions`, rate, 1, () => ({}));
      await phase(`${gateway.url}/v1/chat/completions`, rate, 1, episode(-1));
      const results: Array<{ upstream: Phase; gateway: Phase; addedP50Ms: number; addedP99Ms: number }> = [];
      for (let round = 0; round < rounds; round++) {
        const upstream = await phase(`${stub.url}/chat/completions`, rate, seconds, () => ({}));
        const through = await phase(`${gateway.url}/v1/chat/completions`, rate, seconds, episode(round));
        results.push({ upstream, gateway: through, addedP50Ms: through.p50Ms - upstream.p50Ms, addedP99Ms: through.p99Ms - upstream.p99Ms });
        console.error(
          `bench: round ${round + 1}: upstream alone p50 ${upstream.p50Ms.toFixed(2)} ms p99 ${upstream.p99Ms.toFixed(2)} ms; through the gateway ${through.callsPerSec.toFixed(0)} calls/s p50 ${through.p50Ms.toFixed(2)} ms p99 ${through.p99Ms.toFixed(2)} ms (${through.failed} failed)`,
        );
      }
      const offsets = await admin.fetchTopicOffsets(topicName(config, 'env.steps'));
      const recorded = offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
      const answered = gateway.app.recorder.stats.answeredCalls;
      const summary = {
        bench: 'gateway',
        machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
        rate,
        seconds,
        rounds: results,
        callsPerSec: median(results.map((r) => r.gateway.callsPerSec)),
        upstreamP50Ms: median(results.map((r) => r.upstream.p50Ms)),
        upstreamP99Ms: median(results.map((r) => r.upstream.p99Ms)),
        gatewayP50Ms: median(results.map((r) => r.gateway.p50Ms)),
        gatewayP99Ms: median(results.map((r) => r.gateway.p99Ms)),
        addedP50Ms: median(results.map((r) => r.addedP50Ms)),
        addedP99Ms: median(results.map((r) => r.addedP99Ms)),
        answeredCalls: answered,
        recordedSteps: recorded,
        recordedPerCall: answered === 0 ? 0 : recorded / answered,
      };
      console.log(
        `gateway at ${rate} calls/s: ${summary.callsPerSec.toFixed(0)} calls/s answered, added latency p50 ${summary.addedP50Ms.toFixed(2)} ms, p99 ${summary.addedP99Ms.toFixed(2)} ms (median of ${rounds} rounds; target p99 ≤ 20 ms); ${recorded} steps for ${answered} answered calls`,
      );
      emitResult(args, summary);
      return 0;
    } finally {
      await gateway.close();
    }
  } finally {
    stub.stop();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
    await admin.disconnect();
    await backbone.close();
  }
}
