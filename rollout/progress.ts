// The progress line the actors print while they run: episodes/s and steps/s (over the last interval and
// since the start), success so far, the policy and learner versions, and why the actors wait when the
// staleness bound holds them.
import type { ActorStats } from './actors.js';
import { versionNeededFor } from './staleness-gate.js';

export interface ProgressSnapshot {
  readonly stats: ActorStats;
  readonly atMs: number;
}

export interface ProgressContext {
  readonly startedAtMs: number;
  readonly learnerVersion: number;
  readonly maxStaleness: number | null;
}

const rate = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : 0);
const fmt = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** One progress line; `previous` is the snapshot of the last line (for the recent rate). Pure. */
export function formatProgress(now: ProgressSnapshot, previous: ProgressSnapshot, context: ProgressContext): string {
  const s = now.stats;
  const recentMs = now.atMs - previous.atMs;
  const totalMs = now.atMs - context.startedAtMs;
  const success = s.episodes > 0 ? (100 * s.successes) / s.episodes : 0;
  const meanReturn = s.episodes > 0 ? s.totalReward / s.episodes : 0;
  let line =
    `actors: ${fmt(s.episodes)} episodes (${fmt(rate(s.episodes - previous.stats.episodes, recentMs), 1)}/s now, ${fmt(rate(s.episodes, totalMs), 1)}/s overall), ` +
    `${fmt(s.steps)} steps (${fmt(rate(s.steps - previous.stats.steps, recentMs))}/s), success ${fmt(success, 1)}%, mean return ${fmt(meanReturn, 3)}, ` +
    `iteration ${Math.max(s.iteration, 0)}, policy v${s.policyVersion}, learner v${context.learnerVersion}`;
  if (s.blockedIteration !== null && context.maxStaleness !== null) {
    line += ` — waiting: iteration ${s.blockedIteration} needs learner version ≥ ${versionNeededFor(s.blockedIteration, context.maxStaleness)} (max staleness ${context.maxStaleness})`;
  }
  return line;
}

/** Prints a progress line every `everyMs` until the returned function is called. */
export function startProgress(
  read: () => { stats: ActorStats; learnerVersion: number },
  context: Omit<ProgressContext, 'learnerVersion'>,
  everyMs: number,
  write: (line: string) => void,
): () => void {
  if (everyMs <= 0) return () => undefined;
  let previous: ProgressSnapshot = { stats: { ...read().stats }, atMs: context.startedAtMs };
  const timer = setInterval(() => {
    const { stats, learnerVersion } = read();
    const now: ProgressSnapshot = { stats: { ...stats }, atMs: Date.now() };
    write(formatProgress(now, previous, { ...context, learnerVersion }));
    previous = now;
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
