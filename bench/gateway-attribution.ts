// Where the time of calls through the gateway went, from each answer's Server-Timing header beside the latency
// the bench saw: the p50 and p99 of each phase on its own, and the mean of each phase over the calls at or above
// the p99 latency (the tail that sets the added p99). `restMs` is what no phase holds: HTTP in and out, parsing,
// queueing on the gateway's and the bench's event loops.
import type { CallTiming } from '../gateway/call-timing.js';

export interface TimedCall {
  readonly latencyMs: number;
  readonly timing: CallTiming;
}

const PARTS = ['latencyMs', 'upstreamMs', 'barrierMs', 'watermarksMs', 'barrierWaitMs', 'publishMs', 'restMs'] as const;
type Part = (typeof PARTS)[number];
type Figures = Readonly<Record<Part, number>>;

export interface Attribution {
  readonly calls: number;
  readonly p50: Figures;
  readonly p99: Figures;
  /** Means over the calls whose latency is at or above the p99 latency. */
  readonly tail: Figures;
}

/** A call's parts: its phases, and the rest of its latency. */
function partsOf(call: TimedCall): Figures {
  const { timing: t } = call;
  const restMs = call.latencyMs - t.upstreamMs - t.barrierWaitMs - t.publishMs;
  return {
    latencyMs: call.latencyMs,
    upstreamMs: t.upstreamMs,
    barrierMs: t.barrierMs,
    watermarksMs: t.watermarksMs,
    barrierWaitMs: t.barrierWaitMs,
    publishMs: t.publishMs,
    restMs,
  };
}

const nearestRank = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

function each(pick: (part: Part) => number): Figures {
  return Object.fromEntries(PARTS.map((part) => [part, pick(part)])) as Figures;
}

/** The attribution of a phase's calls; null when none carried timings. */
export function attribution(calls: readonly TimedCall[]): Attribution | null {
  if (calls.length === 0) return null;
  const parts = calls.map(partsOf);
  const sorted = Object.fromEntries(PARTS.map((part) => [part, parts.map((p) => p[part]).sort((a, b) => a - b)])) as Record<Part, number[]>;
  const cut = nearestRank(sorted.latencyMs, 0.99);
  const tail = parts.filter((p) => p.latencyMs >= cut);
  return {
    calls: calls.length,
    p50: each((part) => nearestRank(sorted[part], 0.5)),
    p99: each((part) => nearestRank(sorted[part], 0.99)),
    tail: each((part) => tail.reduce((sum, p) => sum + p[part], 0) / tail.length),
  };
}

/** The median of each figure over rounds' attributions (the rounds without one left out). */
export function medianAttribution(rounds: readonly (Attribution | null)[], median: (values: number[]) => number): Attribution | null {
  const present = rounds.filter((a): a is Attribution => a !== null);
  if (present.length === 0) return null;
  const of = (pick: (a: Attribution) => Figures) => each((part) => median(present.map((a) => pick(a)[part])));
  return { calls: present.reduce((n, a) => n + a.calls, 0), p50: of((a) => a.p50), p99: of((a) => a.p99), tail: of((a) => a.tail) };
}

/** One line of an attribution: the p99 of the phases and what the slowest calls spent where. */
export function attributionLine(a: Attribution): string {
  const f = (x: number) => x.toFixed(1);
  return `p99 barrier ${f(a.p99.barrierMs)} ms (watermarks ${f(a.p99.watermarksMs)}, waited beyond the upstream ${f(a.p99.barrierWaitMs)}), publish ${f(a.p99.publishMs)} ms, rest ${f(a.p99.restMs)} ms; slowest 1 % (mean ${f(a.tail.latencyMs)} ms): upstream ${f(a.tail.upstreamMs)}, barrier wait ${f(a.tail.barrierWaitMs)}, publish ${f(a.tail.publishMs)}, rest ${f(a.tail.restMs)} ms`;
}
