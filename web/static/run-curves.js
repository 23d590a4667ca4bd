// @ts-check
// The charts drawn from the learning curve (one point per rollout batch, or per time bucket): reward, success,
// pass@k, groups closed early, and the rollout side of the collapse panel (in-group std, response length).
import { fmt } from './dom.js';
import { sortedKs } from './run-data.js';
/** @import { Chart, ChartSpec, Column } from './charts.js' */
/** @import { CurvePoint } from './types.js' */
/** @typedef {{ [K in keyof CurvePoint]: CurvePoint[K] extends number | null ? K : never }[keyof CurvePoint]} CurveField a field of the curve with a number */
/** @typedef {(spec: ChartSpec) => Chart} ChartOf the page's chart for a spec */

/**
 * One field of every point, missing values as null.
 * @param {readonly CurvePoint[]} points
 * @param {CurveField} field
 * @returns {Column}
 */
const column = (points, field) => points.map((p) => p[field] ?? null);

/**
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly CurvePoint[]} points
 */
export function rewardChart(chart, xs, points) {
  chart({
    id: 'reward',
    title: 'Reward (mean ± std)',
    description: 'Mean trajectory reward per rollout batch; the band is one standard deviation.',
    series: [{ label: 'reward mean' }, { label: '+1 std', kind: 'band-edge', color: '#6e9fe8' }, { label: '−1 std', kind: 'band-edge', color: '#6e9fe8' }],
    band: [2, 3],
  }).update(xs, [column(points, 'rewardMean'), column(points, 'rewardHigh'), column(points, 'rewardLow')]);
}

/**
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly CurvePoint[]} points
 */
export function successChart(chart, xs, points) {
  chart({
    id: 'success',
    title: 'Success rate',
    description: 'Successful trajectories / trajectories.',
    series: [{ label: 'success rate', color: '#1a7f37' }],
    yRange: [0, 1],
  }).update(xs, [column(points, 'successRate')]);
}

/**
 * One series per k the points report, pass@k solid and pass^k dashed.
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly CurvePoint[]} points
 */
export function passChart(chart, xs, points) {
  const atKs = sortedKs(points, 'passAtK');
  const hatKs = sortedKs(points, 'passHatK');
  chart({
    id: 'pass',
    title: 'pass@k and pass^k',
    description: 'pass@k: at least one of k trials succeeds; pass^k: all k succeed (reliability).',
    series: [...atKs.map((k) => ({ label: `pass@${k}` })), ...hatKs.map((k) => ({ label: `pass^${k}`, dash: [6, 3] }))],
    yRange: [0, 1],
  }).update(xs, [...atKs.map((k) => points.map((p) => p.passAtK?.[k] ?? null)), ...hatKs.map((k) => points.map((p) => p.passHatK?.[k] ?? null))]);
}

/**
 * Groups the assembly completed without waiting for all their members (docs/design/group-completion.md); the figure
 * carries the totals.
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly CurvePoint[]} points
 */
export function closedChart(chart, xs, points) {
  const total = (/** @type {CurveField} */ field) => points.reduce((n, p) => n + (p[field] ?? 0), 0);
  const closedTimeout = total('closedTimeout');
  const closedIdle = total('closedIdle');
  const closed = chart({
    id: 'closed',
    title: 'Groups closed by timeout or idle',
    description: 'Per rollout batch: groups closed by the group timeout, and groups closed after no member arrived for the idle time.',
    series: [
      { label: 'closed by timeout', color: '#d1242f' },
      { label: 'closed by idle', color: '#bc4c00' },
    ],
    summary: () => `; ${closedTimeout} closed by timeout, ${closedIdle} by idle`,
  });
  closed.update(xs, [column(points, 'closedTimeout'), column(points, 'closedIdle')]);
  closed.figure.setAttribute('data-closed-timeout', String(closedTimeout));
  closed.figure.setAttribute('data-closed-idle', String(closedIdle));
}

/**
 * What one point of the curve is: a batch, or a bucket of so many seconds.
 * @param {number} count
 * @param {number | null} bucketMs
 */
export const curveNoteText = (count, bucketMs) =>
  bucketMs === null ? `${count} rollout batches, one point each.` : `${count} points, each pooling the batches of ${fmt(bucketMs / 1000, 0)} s.`;

/**
 * The collapse panel's charts from the rollouts: in-group reward std and response length.
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly CurvePoint[]} points
 */
export function rolloutCollapseCharts(chart, xs, points) {
  chart({
    id: 'in-group-std',
    title: 'In-group reward std',
    description: 'Mean over groups of the reward std inside each group; near 0, group-relative advantages vanish.',
    series: [{ label: 'in-group std', color: '#9a6700' }],
  }).update(xs, [column(points, 'meanInGroupRewardStd')]);
  chart({
    id: 'length',
    title: 'Response length (turns per trajectory)',
    description: 'Mean steps per trajectory (rollout stats meanLength).',
    series: [{ label: 'mean length', color: '#8250df' }],
  }).update(xs, [column(points, 'meanLength')]);
}
