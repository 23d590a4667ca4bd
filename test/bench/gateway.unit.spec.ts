// Unit: `bench gateway`'s pure parts (bench/gateway.ts) — the nearest-rank quantile, a round's added latency and its
// progress line, and the summary's medians, steps per answered call and verdict line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayRound, gatewaySummary, quantile, roundLine, summaryLine, type Phase } from '../../bench/gateway.js';
import { apiCall, GATEWAY_APIS, gatewayApiOf } from '../../bench/gateway-apis.js';

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
