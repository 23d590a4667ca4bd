// @ts-check
// The run page's data and the decisions taken on it, without the DOM: the state its charts are drawn from, how a
// live event changes it, the time range the charts share, and where the event stream starts.
/** @import { AlertView, CurvePoint, EvaluationView, LearnerMetricsView, LiveEvent, RolloutStatsView } from './types.js' */
/**
 * What the run page holds: the curve (bucketMs null when each point is one batch), the learner steps, the alerts
 * and the held-out evaluations.
 * @typedef {{ curve: CurvePoint[], bucketMs: number | null, learner: LearnerMetricsView[], alerts: AlertView[], evaluations: EvaluationView[] }} RunState
 */

/** The stream starts this long before the newest row loaded, so rows stored a little late are not missed. */
export const STREAM_OVERLAP_MS = 60_000;
/** Points kept per series while the page stays open (the oldest go first). */
export const MAX_POINTS = 5000;

export const seconds = (/** @type {number} */ ms) => ms / 1000;
const byTime = (/** @type {CurvePoint} */ a, /** @type {CurvePoint} */ b) => a.timeMs - b.timeMs;

/** @returns {RunState} */
export function emptyRunState() {
  return { curve: [], bucketMs: null, learner: [], alerts: [], evaluations: [] };
}

/**
 * A curve point from a live rollout-stats row: the batch as one point, as the curve has it without buckets (the
 * run's cumulative env steps and policy version are not known from one row).
 * @param {RolloutStatsView} row
 * @returns {CurvePoint}
 */
export function pointOfBatch(row) {
  const { rewardMean: mean, rewardStd: std, meanLength } = row;
  const closed = (/** @type {string} */ reason) => row.closedBy[reason] ?? 0;
  return {
    ...row,
    timeMs: row.eventTimeMs,
    batches: 1,
    lastEventTimeMs: row.eventTimeMs,
    rewardLow: mean === null || std === null ? null : mean - std,
    rewardHigh: mean === null || std === null ? null : mean + std,
    envSteps: meanLength === null ? null : Math.round(meanLength * row.trajectories),
    cumulativeEnvSteps: null,
    policyVersion: null,
    closedFull: closed('full'),
    closedIdle: closed('idle'),
    closedTimeout: closed('timeout'),
    closedEvicted: closed('evicted'),
  };
}

/**
 * Replaces the item with the same key, or appends it.
 * @template T
 * @param {T[]} list
 * @param {T} item
 * @param {(x: T) => string | number | null} key
 */
export function upsert(list, item, key) {
  const at = list.findIndex((x) => key(x) === key(item));
  if (at >= 0) list[at] = item;
  else list.push(item);
}

/**
 * Takes a live event into the state: a batch becomes a curve point when the curve is per batch (a bucketed curve
 * is fetched again instead), a learner step, alert or evaluation replaces the one with its key or is added.
 * Returns true for a batch: the curve (when bucketed) and the pass@k table are then fetched again.
 * @param {RunState} state
 * @param {LiveEvent} event
 */
export function applyLiveEvent(state, [type, data]) {
  if (type === 'rollout-stats') {
    if (state.bucketMs === null) upsert(state.curve, pointOfBatch(data), (p) => p.batchId);
    return true;
  }
  if (type === 'learner-step') upsert(state.learner, data, (s) => s.step);
  else if (type === 'alert') upsert(state.alerts, data, (a) => a.alertId);
  else if (type === 'evaluation') upsert(state.evaluations, data, (e) => e.policyVersion);
  return false;
}

/**
 * Puts each series in order and keeps its newest MAX_POINTS.
 * @param {RunState} state
 */
export function keepNewest(state) {
  state.curve = state.curve.sort(byTime).slice(-MAX_POINTS);
  state.learner = state.learner.sort((a, b) => a.step - b.step).slice(-MAX_POINTS);
  state.evaluations = state.evaluations.sort((a, b) => a.policyVersion - b.policyVersion).slice(-MAX_POINTS);
}

/**
 * The x range every time chart shares, in seconds: the curve, the learner steps and the alerts, padded by 3 % (at
 * least a second); the last hour before `nowMs` while there is nothing.
 * @param {RunState} state
 * @param {number} nowMs
 * @returns {[number, number]}
 */
export function timeRange(state, nowMs) {
  const times = [...state.curve.map((p) => p.timeMs), ...state.learner.map((s) => s.eventTimeMs), ...state.alerts.map((a) => a.eventTimeMs)];
  if (times.length === 0) return [seconds(nowMs - 3_600_000), seconds(nowMs)];
  const min = Math.min(...times);
  const max = Math.max(...times);
  const pad = Math.max(1000, (max - min) * 0.03);
  return [seconds(min - pad), seconds(max + pad)];
}

/**
 * Where the event stream starts: STREAM_OVERLAP_MS before the oldest of the newest rows loaded of each kind
 * (alerts come newest first), or before `nowMs` when nothing was loaded.
 * @param {RunState} state
 * @param {number} nowMs
 */
export function streamStart(state, nowMs) {
  const newestEvaluation = state.evaluations.length > 0 ? Math.max(...state.evaluations.map((e) => e.eventTimeMs)) : undefined;
  const newest = [state.curve.at(-1)?.timeMs, state.learner.at(-1)?.eventTimeMs, state.alerts[0]?.eventTimeMs, newestEvaluation].filter((t) => t !== undefined);
  return (newest.length > 0 ? Math.min(...newest) : nowMs) - STREAM_OVERLAP_MS;
}

/**
 * A learner step's template-collapse scores, when it has them: MI over its upper bound log N, retrieval accuracy and
 * chance. Null for a step the cross-scoring skipped.
 * @param {LearnerMetricsView} step
 */
export function templateScores(step) {
  const mi = step.metrics['template.mi'];
  const bound = step.metrics['template.miUpperBound'];
  if (typeof mi !== 'number' || !Number.isFinite(mi) || typeof bound !== 'number' || !(bound > 0)) return null;
  return { time: seconds(step.eventTimeMs), mi: mi / bound, retrieval: step.metrics['template.retrievalAccuracy'] ?? null, chance: step.metrics['template.chance'] ?? null };
}

/**
 * Every k of a pass map over the points, in numeric order.
 * @param {readonly CurvePoint[]} points
 * @param {'passAtK' | 'passHatK'} field
 */
export const sortedKs = (points, field) => [...new Set(points.flatMap((p) => Object.keys(p[field] ?? {})))].sort((a, b) => Number(a) - Number(b));
