// @ts-check
// Time-series charts over uPlot. Each chart is a <figure> with a caption, the plot, and a text line of the
// latest values (what a screen reader gets; the canvas is an image). The figure carries data-points (the
// number of x values drawn) and data-markers (alert markers in view), so tests and scripts can read them.
// Alerts are drawn on every time chart as vertical lines at their time; all time charts of a page share one
// x range and one cursor, so a spike and the alert that follows it line up. A version chart (held-out
// evaluations) has policy versions on its x axis instead, so it takes no part in either.
import uPlot from '/vendor/uplot/uPlot.esm.js';
import { fmt, h } from './dom.js';

/**
 * One series of a chart: 'line' (the default), 'band-edge' (an edge of the shaded band), 'spikes' (dots only) or
 * 'reference' (a flat line at its latest value, version charts only).
 * @typedef {object} SeriesSpec
 * @property {string} label
 * @property {'line' | 'band-edge' | 'spikes' | 'reference'} [kind]
 * @property {string} [color]
 * @property {number[]} [dash]
 */
/** @typedef {SeriesSpec & { color: string }} ColoredSeries */
/** @typedef {Array<number | null>} Column */
/**
 * A chart: its series, band (1-based positions of the high and low edge), fixed y range, and a text the latest-values
 * line ends with. `axis` says which kind of chart the page asks for: time (the default) or policy version.
 * @typedef {object} ChartSpec
 * @property {string} id
 * @property {string} title
 * @property {string} [description]
 * @property {SeriesSpec[]} series
 * @property {'time' | 'version'} [axis]
 * @property {[number, number]} [band]
 * @property {[number, number]} [yRange]
 * @property {(xs: readonly number[], columns: readonly Column[]) => string} [summary]
 */
/** @typedef {{ readonly t: number, readonly severity: string }} Marker an alert at time t (seconds) */
/**
 * What the time charts of a page share: the x range in seconds, the alert markers, a cursor-sync key.
 * @typedef {object} TimePage
 * @property {() => [number, number]} xRange
 * @property {() => Marker[]} markers
 * @property {string} sync
 */
/**
 * What the page holds of a chart.
 * @typedef {object} Chart
 * @property {HTMLElement} figure
 * @property {(xs: number[], columns: Column[]) => void} update redraws with x values (seconds, or versions) and one array per series
 * @property {() => void} resize
 * @property {() => void} destroy
 */
/** @typedef {{ plot: HTMLDivElement, latest: HTMLParagraphElement, figure: HTMLElement, colored: ColoredSeries[] }} ChartParts */

/** The series colours, in turn, of series that name none. @type {readonly [string, ...string[]]} */
export const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7f86', '#57606a'];
const WARNING_COLOR = '#bc4c00';
/** Alert colours by severity; an unknown severity is drawn as a warning. @type {Readonly<Record<string, string>>} */
const SEVERITY_COLORS = { critical: '#d1242f', warning: WARNING_COLOR, info: '#57606a' };
const HEIGHT = 200;

/**
 * How marker lines look: line width and dash in CSS pixels, opacity, and whether a triangle marks the top.
 * @typedef {{ readonly lineWidth: number, readonly dash: readonly [number, number], readonly alpha: number, readonly triangle: boolean }} MarkerLook
 */
/** The run page's alerts: solid-coloured dashed lines. @type {MarkerLook} */
const ALERT_LOOK = { lineWidth: 2, dash: [6, 4], alpha: 1, triangle: false };

/**
 * Draws markers (an x on the plot's axis and a colour each) as dashed vertical lines; `counted(n)` gets how many
 * are in view.
 * @param {() => readonly { readonly x: number, readonly color: string }[]} markers
 * @param {(shown: number) => void} counted
 * @param {MarkerLook} look
 * @returns {uPlot.Plugin}
 */
export function markerLinesPlugin(markers, counted, look) {
  return {
    hooks: {
      draw: [
        (u) => {
          const { left, top, width, height } = u.bbox;
          const { ctx } = u;
          const r = uPlot.pxRatio;
          let shown = 0;
          for (const marker of markers()) {
            const x = Math.round(u.valToPos(marker.x, 'x', true));
            if (!(x >= left && x <= left + width)) continue;
            shown++;
            ctx.save();
            ctx.globalAlpha = look.alpha;
            ctx.strokeStyle = marker.color;
            ctx.fillStyle = marker.color;
            ctx.lineWidth = look.lineWidth * r;
            ctx.setLineDash([look.dash[0] * r, look.dash[1] * r]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            if (look.triangle) {
              ctx.beginPath();
              ctx.moveTo(x - 5 * r, top);
              ctx.lineTo(x + 5 * r, top);
              ctx.lineTo(x, top + 8 * r);
              ctx.fill();
            }
            ctx.restore();
          }
          counted(shown);
        },
      ],
    },
  };
}

/**
 * The page's alerts as marker lines in their severity's colour.
 * @param {() => Marker[]} markers
 * @returns {() => { x: number, color: string }[]}
 */
const alertLines = (markers) => () => markers().map((m) => ({ x: m.t, color: SEVERITY_COLORS[m.severity] ?? WARNING_COLOR }));

/**
 * Draws each 'reference' series as a dashed horizontal line across the whole plot at its latest value,
 * labelled with the series label: a baseline such as the random policy's success is one number, and drawn
 * as a path it would vanish while there is a single x value. The figure's data-reference holds the value.
 * @param {readonly ColoredSeries[]} series
 * @param {HTMLElement} figure
 * @returns {uPlot.Plugin}
 */
function referencePlugin(series, figure) {
  return {
    hooks: {
      draw: [
        (u) => {
          const { left, top, width } = u.bbox;
          const { ctx } = u;
          series.forEach((spec, i) => {
            if (spec.kind !== 'reference') return;
            const value = lastValue(u.data[i + 1]);
            figure.setAttribute('data-reference', value === null ? '' : String(value));
            if (value === null) return;
            const y = Math.round(u.valToPos(value, 'y', true));
            ctx.save();
            ctx.strokeStyle = spec.color;
            ctx.fillStyle = spec.color;
            ctx.lineWidth = 1.5 * uPlot.pxRatio;
            ctx.setLineDash([6 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
            ctx.font = `${12 * uPlot.pxRatio}px system-ui, sans-serif`;
            ctx.textAlign = 'right';
            ctx.textBaseline = 'bottom';
            // Above the line, unless the line runs along the top of the plot.
            ctx.fillText(spec.label, left + width - 4 * uPlot.pxRatio, y - 3 * uPlot.pxRatio > top + 12 * uPlot.pxRatio ? y - 3 * uPlot.pxRatio : y + 15 * uPlot.pxRatio);
            ctx.restore();
          });
        },
      ],
    },
  };
}

/**
 * uPlot series options for one of our series specs.
 * @param {ColoredSeries} spec
 * @returns {uPlot.Series}
 */
function seriesOptions(spec) {
  const { color } = spec;
  if (spec.kind === 'reference') {
    // Drawn by referencePlugin; here only its legend entry and value.
    return { label: spec.label, stroke: color, width: 1.5, dash: [6, 4], paths: () => null, points: { show: false }, value: valueText };
  }
  if (spec.kind === 'spikes') {
    return { label: spec.label, stroke: color, paths: () => null, points: { show: true, size: 11, width: 2, stroke: color, fill: color }, value: valueText };
  }
  if (spec.kind === 'band-edge') {
    return { label: spec.label, stroke: color, width: 1, dash: [3, 3], points: { show: false }, value: valueText };
  }
  return { label: spec.label, stroke: color, width: 2, points: { size: 5 }, spanGaps: false, value: valueText, ...(spec.dash ? { dash: spec.dash } : {}) };
}

/**
 * A chart over time in `parent`, sharing the page's x range, alert markers and cursor.
 * @param {HTMLElement} parent
 * @param {ChartSpec} spec
 * @param {TimePage} page
 * @returns {Chart}
 */
export function createTimeChart(parent, spec, page) {
  const parts = chartFigure(parent, spec, `${spec.title} over time`);
  const { plot, figure, colored } = parts;
  figure.setAttribute('data-markers', '0');
  /** @type {uPlot.Options} */
  const options = {
    width: Math.max(240, plot.clientWidth || figure.clientWidth || 480),
    height: HEIGHT,
    cursor: { sync: { key: page.sync }, drag: { x: false, y: false } },
    legend: { live: true },
    scales: {
      x: {
        time: true,
        range: () => page.xRange(),
      },
      y: spec.yRange ? { range: spec.yRange } : {},
    },
    axes: [{ values: timeTicks }, { size: 56, values: (_u, ticks) => ticks.map((v) => fmt(v, 2)) }],
    series: [{ label: 'time', value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toLocaleTimeString()) }, ...colored.map(seriesOptions)],
    bands: spec.band ? [{ series: spec.band, fill: 'rgba(31, 111, 235, 0.15)' }] : [],
    plugins: [markerLinesPlugin(alertLines(page.markers), (n) => figure.setAttribute('data-markers', String(n)), ALERT_LOOK)],
  };
  return chartHandle(new uPlot(options, [[], ...colored.map(() => [])], plot), spec, parts);
}

/**
 * A chart in `parent` with policy versions on its x axis (integers, a little padding either side) and no
 * alert markers or shared cursor (those are times). spec: as createTimeChart's, and a series may be of
 * kind 'reference': a flat line at its latest value, labelled (referencePlugin).
 * @param {HTMLElement} parent
 * @param {ChartSpec} spec
 * @returns {Chart}
 */
export function createVersionChart(parent, spec) {
  const parts = chartFigure(parent, spec, `${spec.title} by policy version`);
  const { plot, figure, colored } = parts;
  /** @type {uPlot.Options} */
  const options = {
    width: Math.max(240, plot.clientWidth || figure.clientWidth || 480),
    height: HEIGHT,
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    scales: {
      x: { time: false, range: (_u, min, max) => (Number.isFinite(min) && Number.isFinite(max) ? [min - 0.5, max + 0.5] : [0, 1]) },
      y: spec.yRange ? { range: spec.yRange } : {},
    },
    axes: [
      // Whole versions only: uPlot would otherwise tick at 0.5 when few versions are shown.
      { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000], values: (_u, ticks) => ticks.map((v) => (Number.isInteger(v) ? `v${v}` : '')) },
      { size: 56, values: (_u, ticks) => ticks.map((v) => fmt(v, 2)) },
    ],
    series: [{ label: 'policy version', value: (_u, v) => (v === null ? '–' : `v${v}`) }, ...colored.map(seriesOptions)],
    plugins: [referencePlugin(colored, figure)],
  };
  return chartHandle(new uPlot(options, [[], ...colored.map(() => [])], plot), spec, parts);
}

/**
 * The <figure> of a chart (caption, hint, plot, latest-values line) appended to `parent`, and its series with colours.
 * @param {HTMLElement} parent
 * @param {ChartSpec} spec
 * @param {string} label
 * @returns {ChartParts}
 */
export function chartFigure(parent, spec, label) {
  const plot = h('div', { class: 'plot', role: 'img', 'aria-label': label });
  const latest = h('p', { class: 'latest', 'data-latest': '' }, 'no data yet');
  const figure = h(
    'figure',
    { class: 'chart', 'data-chart': spec.id, 'data-points': 0 },
    h('figcaption', {}, h('h3', {}, spec.title)),
    spec.description ? h('p', { class: 'hint' }, spec.description) : null,
    plot,
    latest,
  );
  parent.append(figure);
  const colored = spec.series.map((s, i) => ({ ...s, color: s.color ?? COLORS[i % COLORS.length] ?? COLORS[0] }));
  return { plot, latest, figure, colored };
}

/**
 * What the page holds of a chart: update (x values and one array per series), resize, destroy.
 * @param {uPlot} chart
 * @param {ChartSpec} spec
 * @param {ChartParts} parts
 * @returns {Chart}
 */
export function chartHandle(chart, spec, { plot, latest, figure, colored }) {
  return {
    figure,
    update(xs, columns) {
      chart.setData([xs, ...columns]);
      figure.setAttribute('data-points', String(xs.length));
      const parts = colored
        .map((s, i) => ({ s, v: lastValue(columns[i]) }))
        .filter(({ s, v }) => s.kind !== 'band-edge' && s.kind !== 'spikes' && v !== null)
        .map(({ s, v }) => `${s.label} ${fmt(v)}`);
      latest.textContent = xs.length === 0 ? 'no data yet' : `${xs.length} points; latest: ${parts.join(' · ') || '–'}`;
      if (spec.summary) latest.textContent += spec.summary(xs, columns);
    },
    resize() {
      chart.setSize({ width: Math.max(240, plot.clientWidth), height: HEIGHT });
    },
    destroy() {
      chart.destroy();
      figure.remove();
    },
  };
}

const two = (/** @type {number} */ n) => String(n).padStart(2, '0');

/** A value in a legend: the series' number, '–' where it has none. @type {uPlot.Series.Value} */
const valueText = (_u, v) => fmt(v);

/**
 * Tick labels of the time axis (seconds): time of day within a day, else month-day and time; 24-hour clock.
 * @param {uPlot} u
 * @param {number[]} ticks
 */
function timeTicks(u, ticks) {
  const span = (u.scales.x?.max ?? 0) - (u.scales.x?.min ?? 0);
  return ticks.map((t) => {
    const d = new Date(t * 1000);
    const time = span < 600 ? `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}` : `${two(d.getHours())}:${two(d.getMinutes())}`;
    return span < 86_400 ? time : `${two(d.getMonth() + 1)}-${two(d.getDate())} ${time}`;
  });
}

/**
 * The last value of a column that is not missing; null when none is.
 * @param {ArrayLike<number | null | undefined> | undefined} column
 */
function lastValue(column) {
  for (let i = (column?.length ?? 0) - 1; i >= 0; i--) {
    const value = column?.[i];
    if (value !== null && value !== undefined) return value;
  }
  return null;
}
