// Fault suite (issue 8, item 2): a slow consumer. A consumer (its own process) that may hold at most 100
// unacknowledged events and acknowledges 400 per second reads the steps topic while this test publishes
// far more, far faster. Backpressure must keep its memory bounded — it stops fetching instead of
// buffering — and the lag must be visible on the dashboard (`trajflow dashboard`, GET /v1/lag), equal to
// what the broker says, and shrinking as the consumer works through it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { topicName } from '../../core/config.js';
import { makeStep } from '../../bench/load/events.js';
import { waitFor } from '../helpers/kafka.js';
import { freePort } from '../../infra/free-port.js';
import { createFaultRun } from './harness.js';
import { retryRetriable } from '../../streams/retry.js';

const CHILD = fileURLToPath(new URL('./slow-consumer-child.ts', import.meta.url));
const EVENTS = 40_000;
const MAX_IN_FLIGHT = 100;
const ACKS_PER_SECOND = 400;
const MB = 1024 * 1024;

interface Sample {
  rss: number;
  heapUsed: number;
  delivered: number;
  acked: number;
  held: number;
  commits: number;
}

interface LagBody {
  totalLag: number | null;
  groups: Array<{ groupId: string; lag: number | null; state: string; members: number }>;
}

test('a slow consumer: memory stays bounded while a producer runs far ahead (backpressure), and GET /v1/lag shows the lag', { timeout: 180_000 }, async () => {
  const run = await createFaultRun('slow');
  const groupId = `${run.prefix}.slow-consumer`;
  const topic = topicName(run.config, 'env.steps');
  const samples: Sample[] = [];
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD, groupId, String(MAX_IN_FLIGHT), String(ACKS_PER_SECOND)], {
    env: run.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) samples.push(JSON.parse(line) as Sample);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const port = await freePort();
  const dashboard = run.part('dashboard', ['--port', String(port)]);
  const lag = async (query = '') => (await (await fetch(`http://127.0.0.1:${port}/v1/lag${query}`)).json()) as LagBody;
  try {
    // The consumer has joined and works before the flood starts: its baseline memory.
    await waitFor(() => samples.length > 0, 'the slow consumer to report', 60_000, 100);
    const warmup = Array.from({ length: 200 }, (_, i) => makeStep({ eventId: `warmup-${i}`, groupId: `group-${i % 16}` }, i));
    await Promise.all(warmup.map((step) => run.backbone.producer.send(topic, 'step', step, step.groupId)));
    await waitFor(() => samples.at(-1)!.acked >= 200, 'the warm-up events acknowledged', 60_000, 100);
    const baseline = samples.at(-1)!;
    const fromSample = samples.length;

    // The flood: 40,000 step events as fast as the producer goes.
    const started = Date.now();
    let published = 0;
    let bytes = 0;
    for (let i = 0; i < EVENTS; i += 1000) {
      const batch = Array.from({ length: 1000 }, (_, j) => makeStep({ eventId: `flood-${i + j}`, groupId: `group-${(i + j) % 16}` }, i + j));
      bytes += batch.reduce((n, step) => n + run.backbone.codec.encode('step', step).length, 0);
      await Promise.all(batch.map((step) => run.backbone.producer.send(topic, 'step', step, step.groupId)));
      published += batch.length;
    }
    const publishMs = Date.now() - started;
    // Let the consumer work a while at its own pace after the producer finished.
    const ackedAfterFlood = samples.at(-1)!.acked;
    await waitFor(() => samples.at(-1)!.acked >= ackedAfterFlood + 2 * ACKS_PER_SECOND, 'two more seconds of slow acknowledgements', 60_000, 100);
    await dashboard.waitLine(/dashboard: API on/, 'the dashboard to listen', 90_000);
    const first = await lag(`?group=${encodeURIComponent(groupId)}`);
    // The broker's own view, for comparison.
    const admin = run.backbone.kafka.admin();
    await admin.connect();
    const [committed] = await retryRetriable(() => admin.fetchOffsets({ groupId, topics: [topic] }));
    const high = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const brokerLag = high.reduce((n, p) => n + Number(p.high), 0) - committed!.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    const ackedAtFirst = samples.at(-1)!.acked;
    await waitFor(() => samples.at(-1)!.acked >= ackedAtFirst + ACKS_PER_SECOND, 'one more second of acknowledgements', 30_000, 100);
    await waitFor(async () => ((await lag(`?group=${encodeURIComponent(groupId)}`)).groups[0]!.lag ?? Infinity) < first.groups[0]!.lag!, 'the lag to shrink', 30_000, 250);
    const second = await lag(`?group=${encodeURIComponent(groupId)}`);
    const all = await lag();

    const during = samples.slice(fromSample);
    const peakHeap = Math.max(...during.map((s) => s.heapUsed));
    const peakRss = Math.max(...during.map((s) => s.rss));
    const peakHeld = Math.max(...during.map((s) => s.delivered - s.acked));
    const last = samples.at(-1)!;
    console.log(
      `fault[slow consumer]: published ${published} events (${(bytes / MB).toFixed(1)} MB) in ${(publishMs / 1000).toFixed(1)} s; the consumer (maxInFlight ${MAX_IN_FLIGHT}, ${ACKS_PER_SECOND} acks/s) received ${last.delivered - baseline.delivered}, ` +
        `acknowledged ${last.acked - baseline.acked}, held at most ${peakHeld}; heap ${(baseline.heapUsed / MB).toFixed(1)} → peak ${(peakHeap / MB).toFixed(1)} MB, rss ${(baseline.rss / MB).toFixed(1)} → peak ${(peakRss / MB).toFixed(1)} MB; ` +
        `GET /v1/lag ${first.groups[0]!.lag} (broker ${brokerLag}) then ${second.groups[0]!.lag}, all groups total ${all.totalLag}`,
    );

    assert.ok(peakHeld <= MAX_IN_FLIGHT, `never more than ${MAX_IN_FLIGHT} unacknowledged events held (${peakHeld})`);
    assert.ok(last.delivered - baseline.delivered < published / 2, 'the consumer did not read ahead of what it acknowledged');
    assert.ok(peakHeap - baseline.heapUsed < 32 * MB, `heap grew ${((peakHeap - baseline.heapUsed) / MB).toFixed(1)} MB while ${(bytes / MB).toFixed(1)} MB were published`);
    assert.ok(peakRss - baseline.rss < 96 * MB, `rss grew ${((peakRss - baseline.rss) / MB).toFixed(1)} MB`);
    const lagged = first.groups[0]!;
    assert.equal(lagged.groupId, groupId);
    assert.ok(lagged.lag! > published / 2, `the dashboard shows the lag (${lagged.lag})`);
    assert.ok(
      Math.abs(lagged.lag! - brokerLag) <= 2 * ACKS_PER_SECOND,
      `the dashboard's lag ${lagged.lag} is the broker's ${brokerLag} (within the acknowledgements between the two reads)`,
    );
    assert.ok(second.groups[0]!.lag! < lagged.lag!, 'the lag shrinks as the consumer works');
    assert.ok(
      all.groups.some((g) => g.groupId === groupId && (g.lag ?? 0) > 0),
      'GET /v1/lag without a group lists the slow group with its lag',
    );
  } finally {
    child.kill('SIGKILL');
    await exited;
    await run.cleanup();
  }
});
