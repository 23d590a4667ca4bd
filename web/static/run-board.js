// @ts-check
// The run page's charts, each drawn in its slot: made on first use, and made again when its series change (as
// when a new k appears); resized and destroyed together.
import { createTimeChart, createVersionChart } from './charts.js';
/** @import { Chart, ChartSpec, TimePage } from './charts.js' */

/**
 * @typedef {object} ChartBoard
 * @property {(spec: ChartSpec) => Chart} chart the chart of the spec's id, with the spec's series
 * @property {() => void} resize
 * @property {() => void} destroy
 */

/**
 * The key a chart is made again on: its id and its series' labels.
 * @param {ChartSpec} spec
 */
const chartKey = (spec) => `${spec.id}|${spec.series.map((s) => s.label).join(',')}`;

/**
 * @param {ReadonlyMap<string, HTMLElement>} slots where each chart id goes
 * @param {TimePage} page what the time charts share
 * @returns {ChartBoard}
 */
export function chartBoard(slots, page) {
  /** @type {Map<string, { key: string, chart: Chart }>} */
  const charts = new Map();
  return {
    chart(spec) {
      const parent = slots.get(spec.id);
      if (!parent) throw new Error(`No place on the page for the chart ${spec.id}`);
      const key = chartKey(spec);
      const existing = charts.get(spec.id);
      if (existing?.key === key) return existing.chart;
      existing?.chart.destroy();
      const created = spec.axis === 'version' ? createVersionChart(parent, spec) : createTimeChart(parent, spec, page);
      charts.set(spec.id, { key, chart: created });
      return created;
    },
    resize: () => charts.forEach(({ chart }) => chart.resize()),
    destroy: () => charts.forEach(({ chart }) => chart.destroy()),
  };
}
