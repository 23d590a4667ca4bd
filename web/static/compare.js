// @ts-check
// The comparison of runs, #/compare?runs=<id>,<id>…&x=envSteps|policyVersion|wallTime: one chart per metric with
// one line per run, aligned on the x axis the page's switch picks (kept in the URL, so a link or a reload shows the
// same), the runs' alerts as markers and listed. The runs come from the URL: each is looked up (GET
// /v1/runs?runIds=) and its series fetched; a run that does not exist, has no data or fails to load says so in
// the legend while the others are drawn. What is drawn where is decided in compare-data.js.
import { ApiError, enc, getJson, isAbort } from './api.js';
import { createCompareChart } from './compare-chart.js';
import {
  METRICS,
  RUN_COLORS,
  X_AXES,
  X_LABELS,
  alertMarkers,
  alertRows,
  alignSeries,
  countProblem,
  formatX,
  metricPoints,
  parseSelection,
  runSummary,
  selectionHash,
  sharedRange,
} from './compare-data.js';
import { fmt, h, onWindowResize, table } from './dom.js';
/** @import { Chart } from './charts.js' */
/** @import { ComparePage } from './compare-chart.js' */
/** @import { RunData, XAxis } from './compare-data.js' */
/** @import { Page, PageContext } from './page-types.js' */
/** @import { RunView } from './types.js' */

/** Rows asked of each series: the most one request returns. */
const LIMIT = 1000;

/**
 * The page's skeleton: breadcrumbs, heading, axis switch, messages, legend, a slot per chart, the alerts box.
 * @param {XAxis} axis
 * @param {(axis: XAxis) => void} onAxis
 */
function compareLayout(axis, onAxis) {
  const heading = h('h1', { tabindex: -1 }, 'Compare runs');
  const messages = h('div', { class: 'compare-messages', role: 'alert' });
  const legend = h('ul', { class: 'compare-legend', 'aria-label': 'Runs compared' }, h('li', {}, 'Loading…'));
  const chartsBox = h('div', { class: 'charts' });
  const alertsBox = h('div', { class: 'alerts-box' });
  const radios = X_AXES.map((x) => h('label', {}, h('input', { type: 'radio', name: 'x-axis', value: x, checked: x === axis, onchange: () => onAxis(x) }), ` ${X_LABELS[x]}`));
  const nodes = [
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Runs'), ' › ', 'Compare'),
    heading,
    messages,
    h('fieldset', { class: 'x-axis' }, h('legend', {}, 'X axis'), radios),
    legend,
    h(
      'p',
      { class: 'hint' },
      "One line per run in its legend colour; dashed lines with a triangle mark the runs' alerts. Env steps: the run's rollout env steps up to each point (held-out: those the evaluated version was trained on). Policy version: the newest published by each rollout batch, the version a learner step started from, the version evaluated. Wall time: since each run's first event.",
    ),
    chartsBox,
    h('section', { 'aria-labelledby': 'compare-alerts-h' }, h('h2', { id: 'compare-alerts-h' }, 'Alerts'), alertsBox),
  ];
  return { nodes, heading, messages, legend, chartsBox, alertsBox };
}

/**
 * Everything the page has of one run, or what its requests failed with.
 * @param {string} runId
 * @param {string} color
 * @param {RunView | null} run
 * @param {AbortSignal} signal
 * @returns {Promise<RunData>}
 */
async function loadRun(runId, color, run, signal) {
  const id = enc(runId);
  const empty = { runId, color, run, curve: [], learner: [], evaluations: [], alerts: [], truncated: false, error: null };
  try {
    const [curve, learner, evaluations, alerts] = await Promise.all([
      getJson(`/v1/runs/${id}/curve?limit=${LIMIT}`, { signal }),
      getJson(`/v1/runs/${id}/learner-metrics?order=asc&limit=${LIMIT}`, { signal }),
      getJson(`/v1/runs/${id}/evaluations?order=asc&limit=${LIMIT}`, { signal }),
      getJson(`/v1/runs/${id}/alerts?order=asc&limit=${LIMIT}`, { signal }),
    ]);
    const truncated = curve.truncated || learner.truncated || evaluations.truncated || alerts.truncated;
    return { ...empty, curve: curve.points, learner: learner.learnerSteps, evaluations: evaluations.evaluations, alerts: alerts.alerts, truncated };
  } catch (error) {
    if (isAbort(error)) throw error;
    return { ...empty, error: error instanceof ApiError ? error.detail : String(error) };
  }
}

/**
 * The runs of the selection, in its order and colours: which exist, then each one's series.
 * @param {readonly string[]} runIds
 * @param {AbortSignal} signal
 */
async function loadRuns(runIds, signal) {
  const { runs } = await getJson(`/v1/runs?runIds=${runIds.map(enc).join(',')}&limit=${runIds.length}`, { signal });
  const byId = new Map(runs.map((run) => [run.runId, run]));
  return Promise.all(runIds.map((runId, i) => loadRun(runId, RUN_COLORS[i % RUN_COLORS.length] ?? RUN_COLORS[0], byId.get(runId) ?? null, signal)));
}

/**
 * The legend's entry of a run: colour, id (a link to its page when it exists), what is known of it, and a button
 * that takes it out of the comparison.
 * @param {RunData} data
 * @param {XAxis} axis
 * @param {() => void} onRemove
 */
function legendItem(data, axis, onRemove) {
  const { state, text } = runSummary(data, axis);
  const name = state === 'missing' ? h('code', {}, data.runId) : h('a', { href: `#/runs/${enc(data.runId)}` }, data.runId);
  return h(
    'li',
    { class: `run-key state-${state}`, 'data-run-id': data.runId, 'data-state': state },
    h('span', { class: 'swatch', style: `background: ${data.color}`, 'aria-hidden': 'true' }),
    name,
    ' ',
    h('span', { class: state === 'ok' ? 'hint' : 'error' }, text),
    ' ',
    h('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${data.runId} from the comparison`, onclick: onRemove }, 'Remove'),
  );
}

/**
 * The alerts of the runs, as a table in run order with each alert's place on the axis.
 * @param {readonly RunData[]} runs
 * @param {XAxis} axis
 */
function alertsContent(runs, axis) {
  const rows = alertRows(runs, axis);
  if (rows.length === 0) return h('p', { class: 'empty', 'data-alerts': 0 }, 'No collapse alerts in these runs.');
  return table(
    `${rows.length} collapse alert${rows.length === 1 ? '' : 's'} (dashed lines on the charts, in the run's colour)`,
    ['Run', X_LABELS[axis], 'Severity', 'Kind', 'Value / threshold', 'Message'],
    rows.map(({ runId, color, x, alert }) => [
      [h('span', { class: 'swatch', style: `background: ${color}`, 'aria-hidden': 'true' }), runId],
      x === null ? '–' : formatX(axis, x),
      h('span', { class: `badge severity-${alert.severity}` }, alert.severity),
      alert.kind,
      `${fmt(alert.value)} / ${fmt(alert.threshold)}`,
      alert.message,
    ]),
    { class: 'alerts compare-alerts', 'data-alerts': rows.length },
  );
}

/**
 * Every chart drawn again on the axis (made anew, as the axis' labels change), sharing one x range and cursor.
 * @param {HTMLElement} box
 * @param {readonly RunData[]} runs
 * @param {XAxis} axis
 * @returns {Chart[]}
 */
function drawCharts(box, runs, axis) {
  const markers = alertMarkers(runs, axis);
  const aligned = METRICS.map((metric) => alignSeries(runs.map((data) => metricPoints(metric, data, axis).points)));
  const range = sharedRange([...aligned.flatMap((a) => a.xs), ...markers.map((m) => m.x)], axis);
  /** @type {ComparePage} */
  const page = { axis, range: () => range, markers: () => markers, sync: 'compare' };
  return METRICS.map((metric, i) => {
    const { id, title, description, yRange } = metric;
    const series = runs.map((data) => ({ label: data.runId, color: data.color }));
    const chart = createCompareChart(box, { id, title, description, series, ...(yRange ? { yRange } : {}) }, page);
    const { xs, columns } = aligned[i] ?? { xs: [], columns: [] };
    chart.update(xs, columns);
    return chart;
  });
}

/**
 * Says what is wrong with the URL: names that are no run id, and too few or too many runs.
 * @param {HTMLElement} box
 * @param {{ readonly runIds: readonly string[], readonly invalid: readonly string[] }} selection
 * @returns {boolean} whether the runs can be compared
 */
function showProblems(box, { runIds, invalid }) {
  const problem = countProblem(runIds);
  const lines = [invalid.length > 0 ? `Not a run id, left out: ${invalid.map((name) => `'${name.slice(0, 80)}'`).join(', ')}.` : null, problem].filter((line) => line !== null);
  box.replaceChildren(...lines.map((line) => h('p', { class: 'error' }, line)));
  if (problem !== null) box.append(h('p', {}, h('a', { href: '#/' }, 'Pick runs on the runs list')));
  return problem === null;
}

/**
 * @param {HTMLElement} root
 * @param {{ readonly search: string }} route
 * @param {PageContext} context
 * @returns {Page}
 */
export function renderCompare(root, { search }, { signal, onError }) {
  const selection = parseSelection(search);
  /** @type {{ axis: XAxis, runs: RunData[], charts: Chart[] }} */
  const state = { axis: selection.x, runs: [], charts: [] };
  const draw = () => {
    for (const chart of state.charts) chart.destroy();
    state.charts = drawCharts(layout.chartsBox, state.runs, state.axis);
    const remove = (/** @type {string} */ runId) => () => {
      location.hash = selectionHash({ runIds: selection.runIds.filter((id) => id !== runId), x: state.axis });
    };
    layout.legend.replaceChildren(...state.runs.map((data) => legendItem(data, state.axis, remove(data.runId))));
    layout.alertsBox.replaceChildren(alertsContent(state.runs, state.axis));
  };
  const layout = compareLayout(state.axis, (axis) => {
    state.axis = axis;
    history.replaceState(null, '', selectionHash({ runIds: selection.runIds, x: axis }));
    if (state.runs.length > 0) draw();
  });
  root.append(...layout.nodes);
  // The URL as the page reads it: ids once each, a known axis.
  history.replaceState(null, '', selectionHash(selection));
  const title = 'Compare runs';
  if (!showProblems(layout.messages, selection)) {
    layout.legend.replaceChildren();
    return { title, heading: layout.heading, dispose() {} };
  }
  loadRuns(selection.runIds, signal)
    .then((runs) => {
      state.runs = runs;
      if (!signal.aborted) draw();
    })
    .catch(onError);
  const stopResizing = onWindowResize(() => state.charts.forEach((chart) => chart.resize()));
  return {
    title,
    heading: layout.heading,
    dispose() {
      stopResizing();
      for (const chart of state.charts) chart.destroy();
    },
  };
}
