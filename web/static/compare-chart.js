// @ts-check
// A chart of the comparison of runs: one line per run, in the run's colour, on a numeric x axis (env steps, policy
// version, or seconds since each run's start). The charts of the page share one x range and one cursor, and draw
// the runs' alerts as dashed lines in the run's colour with a triangle on top. The figure carries data-markers
// (alerts in view) and data-run-points (points per run, as JSON), so tests and scripts can read them.
import uPlot from '/vendor/uplot/uPlot.esm.js';
import { chartFigure, chartHandle, markerLinesPlugin } from './charts.js';
import { X_LABELS, formatX } from './compare-data.js';
import { fmt } from './dom.js';
/** @import { Chart, ChartSpec, ColoredSeries, MarkerLook } from './charts.js' */
/** @import { AlertMarker, XAxis } from './compare-data.js' */

/**
 * What the charts of the comparison share: the axis, its range, the alert markers, the cursor-sync key.
 * @typedef {object} ComparePage
 * @property {XAxis} axis
 * @property {() => [number, number]} range
 * @property {() => AlertMarker[]} markers
 * @property {string} sync
 */

const HEIGHT = 220;
/** Tick steps of the axes whose units have natural multiples: whole versions, and round durations in seconds. */
const TICK_STEPS = {
  policyVersion: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000],
  wallTime: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800],
};
/** Markers are drawn see-through, so a run's line stays the only thing in its full colour. @type {MarkerLook} */
const RUN_ALERT_LOOK = { lineWidth: 1.5, dash: [5, 4], alpha: 0.55, triangle: true };

/**
 * The uPlot options of a comparison chart.
 * @param {ChartSpec} spec
 * @param {ColoredSeries[]} colored
 * @param {ComparePage} page
 * @param {{ width: number, onMarkers: (n: number) => void }} extra
 * @returns {uPlot.Options}
 */
function compareOptions(spec, colored, page, { width, onMarkers }) {
  const steps = page.axis === 'envSteps' ? {} : { incrs: TICK_STEPS[page.axis] };
  return {
    width,
    height: HEIGHT,
    cursor: { sync: { key: page.sync }, drag: { x: false, y: false } },
    legend: { live: true },
    scales: { x: { time: false, range: () => page.range() }, y: spec.yRange ? { range: spec.yRange } : {} },
    axes: [
      { label: X_LABELS[page.axis], labelSize: 20, values: (_u, ticks) => ticks.map((v) => formatX(page.axis, v)), ...steps },
      // uPlot's own labels carry as many decimals as the tick step needs (a KL of 0.002 is not 0.00).
      { size: 56 },
    ],
    series: [
      { label: X_LABELS[page.axis], value: (_u, v) => (v === null ? '–' : formatX(page.axis, v)) },
      ...colored.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        spanGaps: true,
        points: { size: 5 },
        value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v) => fmt(v),
      })),
    ],
    plugins: [markerLinesPlugin(page.markers, onMarkers, RUN_ALERT_LOOK)],
  };
}

/**
 * A comparison chart in `parent`: one series per run (the spec's series, labelled with the run ids, in their colours).
 * update() takes the aligned x values and one column per run, and says per run how many points it drew and its last value.
 * @param {HTMLElement} parent
 * @param {ChartSpec} spec
 * @param {ComparePage} page
 * @returns {Chart}
 */
export function createCompareChart(parent, spec, page) {
  const parts = chartFigure(parent, spec, `${spec.title} by ${X_LABELS[page.axis].toLowerCase()}, one line per run`);
  const { plot, figure, colored, latest } = parts;
  figure.setAttribute('data-markers', '0');
  const width = Math.max(240, plot.clientWidth || figure.clientWidth || 480);
  const options = compareOptions(spec, colored, page, { width, onMarkers: (n) => figure.setAttribute('data-markers', String(n)) });
  const handle = chartHandle(new uPlot(options, [[], ...colored.map(() => [])], plot), spec, parts);
  return {
    ...handle,
    update(xs, columns) {
      handle.update(xs, columns);
      const perRun = colored.map((s, i) => {
        const drawn = (columns[i] ?? []).filter((v) => v !== null);
        return { label: s.label, points: drawn.length, last: drawn.at(-1) ?? null };
      });
      figure.setAttribute('data-run-points', JSON.stringify(Object.fromEntries(perRun.map((r) => [r.label, r.points]))));
      const drawnRuns = perRun.filter((r) => r.points > 0);
      latest.textContent =
        drawnRuns.length === 0 ? 'no data yet' : `Last values: ${drawnRuns.map((r) => `${r.label} ${fmt(r.last)} (${r.points} point${r.points === 1 ? '' : 's'})`).join(' · ')}`;
    },
  };
}
