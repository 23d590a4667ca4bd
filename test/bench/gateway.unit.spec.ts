// Unit: `bench gateway`'s pure parts (bench/gateway.ts, gateway-attribution.ts) — the nearest-rank quantile, a
// round's added latency and its progress line, where the calls' time went, and the summary's medians (beside a
// single-instance gateway's when compared), steps per answered call and verdict line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayRound, gatewaySummary, quantile, roundLine, summaryLine, type Phase } from '../../bench/gateway.js';
import { apiCall, GATEWAY_APIS, gatewayApiOf } from '../../bench/gateway-apis.js';
import { attribution, attributionLine, type TimedCall } from '../../bench/gateway-attribution.js';

const phase = (p50Ms: number, p99Ms: number, callsPerSec = 200, failed = 0): Phase => ({ answered: 1000, failed, callsPerSec, p50Ms, p99Ms });

test('the nearest-rank quantile of sorted values; NaN for none', () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(quantile(sorted, 0.5), 50);
  assert.equal(quantile(sorted, 0.99), 99);
  assert.equal(quantile(sorted, 1), 100);
  assert.equal(quantile([7], 0), 7);
  assert.ok(Number.isNaN(quantile([], 0.5)));
});

test("a round: the gateway's percentiles minus the upstream's, and its progress line", () => {
  const round = gatewayRound(phase(1, 3), phase(4.5, 18, 199.6, 2));
  assert.equal(round.addedP50Ms, 3.5);
  assert.equal(round.addedP99Ms, 15);
  assert.equal(
    roundLine(0, phase(1, 3), phase(4.5, 18, 199.6, 2)),
    'bench: round 1: upstream alone p50 1.00 ms p99 3.00 ms; through the gateway 200 calls/s p50 4.50 ms p99 18.00 ms (2 failed)',
  );
});

test('the summary: medians over the rounds, the steps recorded per answered call (0 without calls), the verdict line', () => {
  const rounds = [gatewayRound(phase(1, 2), phase(3, 12)), gatewayRound(phase(1, 4), phase(5, 40)), gatewayRound(phase(2, 3), phase(4, 20))];
  const summary = gatewaySummary({ machine: { cpus: 2 }, api: 'responses', rate: 200, seconds: 10 }, rounds, 6000, 6000);
  assert.deepEqual(Object.keys(summary), [
    'bench',
    'api',
    'machine',
    'rate',
    'seconds',
    'rounds',
    'callsPerSec',
    'upstreamP50Ms',
    'upstreamP99Ms',
    'gatewayP50Ms',
    'gatewayP99Ms',
    'addedP50Ms',
    'addedP99Ms',
    'attribution',
    'answeredCalls',
    'recordedSteps',
    'recordedPerCall',
  ]);
  assert.equal(summary.bench, 'gateway');
  assert.equal(summary.upstreamP99Ms, 3);
  assert.equal(summary.gatewayP99Ms, 20);
  assert.equal(summary.addedP50Ms, 2);
  assert.equal(summary.addedP99Ms, 17);
  assert.equal(summary.recordedPerCall, 1);
  assert.equal(gatewaySummary({ machine: {}, api: 'chat', rate: 1, seconds: 1 }, rounds, 0, 5).recordedPerCall, 0);
  assert.equal(
    summaryLine(summary, 3),
    'gateway (responses) at 200 calls/s: 200 calls/s answered, added latency p50 2.00 ms, p99 17.00 ms (median of 3 rounds; target p99 ≤ 20 ms); 6000 steps for 6000 answered calls (1 per call)',
  );
});

test("--api: each API's call as its client sends it, chat by default, anything else refused", () => {
  assert.equal(gatewayApiOf([]), 'chat');
  assert.equal(gatewayApiOf(['--api', 'messages']), 'messages');
  assert.throws(() => gatewayApiOf(['--api', 'completions']), /--api must be one of chat, responses, messages/);
  assert.deepEqual(
    GATEWAY_APIS.map((api) => apiCall(api).path),
    ['/v1/chat/completions', '/v1/responses', '/v1/messages'],
  );
  assert.equal(apiCall('messages').headers['anthropic-version'], '2023-06-01');
  assert.deepEqual(Object.keys(JSON.parse(apiCall('responses').body)), ['model', 'input', 'max_output_tokens']);
});

/** A call of `latencyMs` that waited `barrierWaitMs` for the read barrier and `publishMs` for the acknowledgement. */
const timed = (latencyMs: number, barrierWaitMs: number, publishMs: number): TimedCall => ({
  latencyMs,
  timing: { upstreamMs: 0.5, barrierMs: barrierWaitMs + 0.5, watermarksMs: barrierWaitMs + 0.4, barrierWaitMs, publishMs, recordMs: 0.5 + barrierWaitMs + publishMs },
});

test("where the calls' time went: each phase's p50 and p99, and the slowest 1 %'s mean of each, the rest being what no phase holds", () => {
  const calls = [...Array.from({ length: 98 }, (_, i) => timed(i + 1, 0, 1)), timed(150, 100, 20), timed(250, 200, 30)];
  const a = attribution(calls)!;
  assert.equal(a.calls, 100);
  assert.deepEqual([a.p50.latencyMs, a.p50.barrierWaitMs, a.p50.publishMs], [50, 0, 1]);
  assert.deepEqual([a.p99.latencyMs, a.p99.barrierWaitMs, a.p99.publishMs], [150, 100, 20]);
  assert.deepEqual([a.tail.latencyMs, a.tail.barrierWaitMs, a.tail.publishMs, a.tail.upstreamMs, a.tail.restMs], [200, 150, 25, 0.5, 24.5]);
  assert.equal(attribution([]), null);
  assert.match(
    attributionLine(a),
    /^p99 barrier 100\.5 ms \(watermarks 100\.4, waited beyond the upstream 100\.0\), publish 20\.0 ms, rest [0-9.]+ ms; slowest 1 % \(mean 200\.0 ms\): upstream 0\.5, barrier wait 150\.0, publish 25\.0, rest 24\.5 ms$/,
  );
});

test('a round compared with a single-instance gateway: its added latency beside the default, and the summary holds both', () => {
  const single = { phase: phase(2, 10), calls: [timed(10, 0, 8)] };
  const rounds = [gatewayRound(phase(1, 2), phase(3, 12), [timed(12, 6, 3)], single), gatewayRound(phase(1, 2), phase(3, 16), [], single)];
  assert.equal(rounds[0]!.singleInstance!.addedP99Ms, 8);
  assert.equal(rounds[0]!.attribution!.p99.barrierWaitMs, 6);
  assert.equal(rounds[1]!.attribution, null);
  const summary = gatewaySummary({ machine: {}, api: 'chat', rate: 200, seconds: 10 }, rounds, 8000, 8000);
  assert.equal(summary.addedP99Ms, 12);
  assert.equal(summary.attribution!.calls, 1, 'rounds without timings are left out');
  assert.equal(summary.singleInstance!.addedP99Ms, 8);
  assert.match(summaryLine(summary, 2), /p99 12\.00 ms \(median of 2 rounds; target p99 ≤ 20 ms\); --single-instance added p50 1\.00 ms, p99 8\.00 ms; 8000 steps/);
});
