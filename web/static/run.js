// @ts-check
// One run: learning curves, held-out evaluations by policy version, the collapse panel with its alerts, and
// the run's trajectories, kept current by the run's event stream. The data lives in `state` (run-data.js); every
// change schedules one redraw of all charts. The page's skeleton, its charts and its tables are in the run-*.js
// modules, one per panel; this one loads the data, follows the stream and draws.
import { enc, getJson } from './api.js';
import { alertsTable } from './collapse.js';
import { onWindowResize } from './dom.js';
import { subscribe } from './live.js';
import { chartBoard } from './run-board.js';
import { closedChart, curveNoteText, passChart, rewardChart, rolloutCollapseCharts, successChart } from './run-curves.js';
import { applyLiveEvent, emptyRunState, keepNewest, seconds, streamStart, timeRange } from './run-data.js';
import { heldOutChart, showEvaluationSummary } from './run-evaluations.js';
import { runLayout } from './run-layout.js';
import { entropyAndGradCharts, offPolicyCharts, templateChart } from './run-learner.js';
import { passTableContent, trajectoriesContent } from './run-tables.js';
/** @import { TimePage } from './charts.js' */
/** @import { Page, PageContext } from './page-types.js' */
/** @import { ChartOf } from './run-curves.js' */
/** @import { RunState } from './run-data.js' */
/** @import { RunLayout } from './run-layout.js' */
/** @import { CurvePoint, LearnerMetricsView, OnLiveEvent } from './types.js' */

/**
 * What the run page's loaders and drawers share: the run, its data, its elements, and the signal that ends its requests.
 * @typedef {{ readonly runId: string, readonly state: RunState, readonly layout: RunLayout, readonly signal: AbortSignal }} RunPage
 */

/**
 * The charts of the learning curve, and the line saying what one of its points is.
 * @param {ChartOf} chart
 * @param {readonly CurvePoint[]} points
 * @param {number | null} bucketMs
 * @param {HTMLElement} note
 */
function drawCurves(chart, points, bucketMs, note) {
  const xs = points.map((p) => seconds(p.timeMs));
  rewardChart(chart, xs, points);
  successChart(chart, xs, points);
  passChart(chart, xs, points);
  closedChart(chart, xs, points);
  note.textContent = curveNoteText(points.length, bucketMs);
  rolloutCollapseCharts(chart, xs, points);
}

/**
 * The charts of the learner's steps.
 * @param {ChartOf} chart
 * @param {readonly LearnerMetricsView[]} steps
 */
function drawLearner(chart, steps) {
  const xs = steps.map((s) => seconds(s.eventTimeMs));
  entropyAndGradCharts(chart, xs, steps);
  templateChart(chart, steps);
  offPolicyCharts(chart, xs, steps);
}

/**
 * Every chart and the alerts table, from the state with each series in order and trimmed.
 * @param {RunPage} run
 * @param {ChartOf} chart
 */
function drawAll({ state, layout }, chart) {
  keepNewest(state);
  drawCurves(chart, state.curve, state.bucketMs, layout.curveNote);
  heldOutChart(chart, state.evaluations);
  showEvaluationSummary(layout.evaluationNote, state.evaluations);
  drawLearner(chart, state.learner);
  layout.alertsBox.replaceChildren(alertsTable(state.alerts));
}

/**
 * A draw on the next frame, however many changes ask for one before it; none once the page is gone.
 * @param {AbortSignal} signal
 * @param {() => void} drawNow
 */
function frameScheduler(signal, drawNow) {
  let queued = false;
  return () => {
    if (queued || signal.aborted) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      if (signal.aborted) return;
      drawNow();
    });
  };
}

/** @param {RunPage} run */
async function loadCurve({ runId, state, signal }) {
  const curve = await getJson(`/v1/runs/${enc(runId)}/curve?limit=1000`, { signal });
  state.curve = curve.points;
  state.bucketMs = curve.bucketMs;
}

/** @param {RunPage} run */
async function loadPassTable({ runId, layout, signal }) {
  const pass = await getJson(`/v1/runs/${enc(runId)}/pass-at-k?limit=1000`, { signal });
  layout.passTable.replaceChildren(passTableContent(pass));
}

/** @param {RunPage} run */
async function loadTrajectories({ runId, layout, signal }) {
  const [body, outcomes] = await Promise.all([getJson(`/v1/runs/${enc(runId)}/trajectories?limit=50`, { signal }), getJson(`/v1/runs/${enc(runId)}/episode-outcomes`, { signal })]);
  layout.trajectoriesBox.replaceChildren(...trajectoriesContent(runId, body, outcomes));
}

/**
 * Says whether the stream is live.
 * @param {HTMLElement} liveStatus
 * @param {string} text
 */
function showLiveStatus(liveStatus, text) {
  liveStatus.textContent = `Live updates: ${text}`;
  liveStatus.setAttribute('data-live', text === 'live' ? 'on' : 'off');
}

/**
 * The first load (learner steps, alerts, evaluations, curve), drawn; then the live stream from a little before the
 * newest of them, whose end goes to `subscribed`; then the tables.
 * @param {RunPage} run
 * @param {() => void} draw
 * @param {OnLiveEvent} onEvent
 * @param {(unsubscribe: () => void) => void} subscribed
 */
async function loadRun(run, draw, onEvent, subscribed) {
  const { runId, state, layout, signal } = run;
  const [learner, alerts, evaluations] = await Promise.all([
    getJson(`/v1/runs/${enc(runId)}/learner-metrics?order=desc&limit=1000`, { signal }),
    getJson(`/v1/runs/${enc(runId)}/alerts?order=desc&limit=500`, { signal }),
    getJson(`/v1/runs/${enc(runId)}/evaluations?order=desc&limit=1000`, { signal }),
    loadCurve(run),
  ]);
  state.learner = learner.learnerSteps.reverse();
  state.alerts = alerts.alerts;
  state.evaluations = evaluations.evaluations.reverse();
  draw();
  const since = streamStart(state, Date.now());
  if (!signal.aborted) subscribed(subscribe(runId, since, onEvent, (text) => showLiveStatus(layout.liveStatus, text)));
  await Promise.all([loadPassTable(run), loadTrajectories(run)]);
}

/**
 * Live rows into the state, each change drawn: per-batch curves take the batch as a point; bucketed curves, and the
 * pass@k table, are fetched again (throttled).
 * @param {RunPage} run
 * @param {() => void} draw
 * @param {(error: unknown) => void} onError
 * @returns {{ onEvent: OnLiveEvent, dispose: () => void }}
 */
function liveUpdates(run, draw, onError) {
  /** @type {number | undefined} */
  let refetch;
  /** @param {() => Promise<unknown>} work */
  function later(work) {
    if (refetch !== undefined) return;
    refetch = setTimeout(() => {
      refetch = undefined;
      work().then(draw, onError);
    }, 2000);
  }
  return {
    onEvent(...event) {
      if (applyLiveEvent(run.state, event)) {
        later(async () => {
          await Promise.all([run.state.bucketMs === null ? null : loadCurve(run), loadPassTable(run)]);
        });
      }
      draw();
    },
    dispose: () => clearTimeout(refetch),
  };
}

/**
 * @param {HTMLElement} root
 * @param {{ readonly runId: string }} route
 * @param {PageContext} context
 * @returns {Page}
 */
export function renderRun(root, { runId }, { signal, onError }) {
  const state = emptyRunState();
  const layout = runLayout(runId);
  root.append(...layout.nodes);
  /** @type {TimePage} */
  const page = {
    sync: `run:${runId}`,
    markers: () => state.alerts.map((a) => ({ t: seconds(a.eventTimeMs), severity: a.severity })),
    xRange: () => timeRange(state, Date.now()),
  };
  const board = chartBoard(layout.slots, page);
  /** @type {RunPage} */
  const run = { runId, state, layout, signal };
  const draw = frameScheduler(signal, () => drawAll(run, board.chart));
  const live = liveUpdates(run, draw, onError);
  /** @type {() => void} */
  let unsubscribe = () => undefined;
  const stopResizing = onWindowResize(board.resize);
  loadRun(run, draw, live.onEvent, (end) => {
    unsubscribe = end;
  }).catch(onError);
  return {
    title: `Run ${runId}`,
    heading: layout.heading,
    dispose() {
      unsubscribe();
      live.dispose();
      stopResizing();
      board.destroy();
    },
  };
}
