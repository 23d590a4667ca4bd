// @ts-check
// The comparison of runs without the DOM: which runs and which x axis the page's URL names, each run's colour and
// legend, and each chart's lines — one per run, on one x axis (env steps, policy version, or wall time since the
// run's start) — with the runs' alerts as markers. Every x value comes from the API (the curve's cumulative env
// steps and policy version, the learner steps' and alerts' env steps, the evaluations' own); nothing is estimated.
/** @import { AlertView, CurvePoint, EvaluationView, LearnerMetricsView, RunView } from './types.js' */

export const MIN_RUNS = 2;
export const MAX_RUNS = 8;

/** @typedef {'envSteps' | 'policyVersion' | 'wallTime'} XAxis */
/** @type {readonly XAxis[]} */
export const X_AXES = ['envSteps', 'policyVersion', 'wallTime'];
/** @type {XAxis} */
export const DEFAULT_X = 'envSteps';
/** @type {Readonly<Record<XAxis, string>>} */
export const X_LABELS = { envSteps: 'Env steps', policyVersion: 'Policy version', wallTime: 'Wall time since start' };

/** The API's id grammar (schemas/ids.ts; a unit test holds the two equal): a name that fails it is no run. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$/;

/** One colour per run, by its place in the selection: distinct hues that read on white. */
export const RUN_COLORS = /** @type {const} */ (['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7f86', '#57606a']);

/**
 * The runs and the axis the URL names: ids in the order named, each once; names that are no id apart.
 * @typedef {{ readonly runIds: readonly string[], readonly x: XAxis, readonly invalid: readonly string[] }} Selection
 */

/**
 * Reads the query of #/compare?runs=a,b&x=envSteps; an unknown or missing x is the default.
 * @param {string} search the part after '?'
 * @returns {Selection}
 */
export function parseSelection(search) {
  const params = new URLSearchParams(search);
  const named = [
    ...new Set(
      (params.get('runs') ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    ),
  ];
  const x = X_AXES.find((axis) => axis === params.get('x')) ?? DEFAULT_X;
  return { runIds: named.filter((id) => ID_PATTERN.test(id)), x, invalid: named.filter((id) => !ID_PATTERN.test(id)) };
}

/**
 * The hash of a comparison, as parseSelection reads it.
 * @param {{ readonly runIds: readonly string[], readonly x: XAxis }} selection
 */
export const selectionHash = ({ runIds, x }) => `#/compare?runs=${runIds.map(encodeURIComponent).join(',')}&x=${x}`;

/**
 * Why the selection cannot be compared (too few or too many runs), or null when it can.
 * @param {readonly string[]} runIds
 */
export function countProblem(runIds) {
  const n = runIds.length;
  if (n < MIN_RUNS) return `Pick at least ${MIN_RUNS} runs to compare; this link names ${n === 0 ? 'none' : n === 1 ? 'one' : n}. Choose them on the runs list.`;
  if (n > MAX_RUNS) return `At most ${MAX_RUNS} runs can be compared at once; this link names ${n}. Remove some.`;
  return null;
}

/**
 * What the runs list's compare button says about a selection of n runs, and whether it may compare them.
 * @param {number} n
 */
export function selectionNote(n) {
  if (n < MIN_RUNS) return { ok: false, text: `Tick ${MIN_RUNS} to ${MAX_RUNS} runs to compare them.` };
  if (n > MAX_RUNS) return { ok: false, text: `${n} runs ticked: at most ${MAX_RUNS} can be compared at once.` };
  return { ok: true, text: `${n} runs ticked.` };
}

/**
 * What the page loaded of one run. `run` is its row of GET /v1/runs?runIds= (null: no events in the last year);
 * `error` what its requests failed with.
 * @typedef {object} RunData
 * @property {string} runId
 * @property {string} color
 * @property {RunView | null} run
 * @property {readonly CurvePoint[]} curve
 * @property {readonly LearnerMetricsView[]} learner
 * @property {readonly EvaluationView[]} evaluations
 * @property {readonly AlertView[]} alerts
 * @property {boolean} truncated some series held more rows than one request returns
 * @property {string | null} error
 */

/** Where a row stands in its run, on each axis; null where the API does not know it. @typedef {{ envSteps: number | null, policyVersion: number | null, timeMs: number }} Progress */

/** @param {CurvePoint} p @returns {Progress} */
const curveProgress = (p) => ({ envSteps: p.cumulativeEnvSteps, policyVersion: p.policyVersion, timeMs: p.lastEventTimeMs });
/** @param {LearnerMetricsView | AlertView} row @returns {Progress} */
const rowProgress = (row) => ({ envSteps: row.envSteps, policyVersion: row.policyVersion, timeMs: row.eventTimeMs });
/** The evaluation's own count of the env steps the version was trained on (-1: not reported). @param {EvaluationView} e @returns {Progress} */
const evaluationProgress = (e) => ({ envSteps: e.envSteps < 0 ? null : e.envSteps, policyVersion: e.policyVersion, timeMs: e.eventTimeMs });

/**
 * When the run started: its first event as GET /v1/runs saw it, else the earliest row loaded; null with neither.
 * @param {RunData} data
 */
export function runStartMs(data) {
  if (data.run) return data.run.firstEventTimeMs;
  const times = [
    ...data.curve.map((p) => p.timeMs),
    ...data.learner.map((s) => s.eventTimeMs),
    ...data.evaluations.map((e) => e.eventTimeMs),
    ...data.alerts.map((a) => a.eventTimeMs),
  ];
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * A row's x on the axis: env steps, policy version, or seconds since the run's start; null where unknown.
 * @param {XAxis} axis
 * @param {Progress} progress
 * @param {number | null} startMs
 */
export function xOf(axis, progress, startMs) {
  if (axis === 'envSteps') return progress.envSteps;
  if (axis === 'policyVersion') return progress.policyVersion;
  return startMs === null ? null : (progress.timeMs - startMs) / 1000;
}

/**
 * One chart of the comparison: which rows of a run it draws and the value it reads of each.
 * @typedef {object} Metric
 * @property {string} id
 * @property {string} title
 * @property {string} description
 * @property {[number, number]} [yRange]
 * @property {(data: RunData) => ReadonlyArray<{ progress: Progress, y: number | null }>} rows
 */

/** @type {readonly Metric[]} */
export const METRICS = [
  {
    id: 'reward',
    title: 'Reward (mean)',
    description: 'Mean trajectory reward per rollout batch.',
    rows: (d) => d.curve.map((p) => ({ progress: curveProgress(p), y: p.rewardMean })),
  },
  {
    id: 'success',
    title: 'Success rate',
    description: 'Successful trajectories / trajectories, per rollout batch.',
    yRange: [0, 1],
    rows: (d) => d.curve.map((p) => ({ progress: curveProgress(p), y: p.successRate })),
  },
  {
    id: 'held-out',
    title: 'Held-out success (greedy)',
    description: 'Greedy success on held-out tasks, per evaluated policy version; on env steps, those the version was trained on.',
    yRange: [0, 1],
    rows: (d) => d.evaluations.map((e) => ({ progress: evaluationProgress(e), y: e.greedySuccess })),
  },
  {
    id: 'entropy',
    title: 'Policy entropy',
    description: 'Mean token entropy per learner step.',
    rows: (d) => d.learner.map((s) => ({ progress: rowProgress(s), y: s.entropy })),
  },
  {
    id: 'kl',
    title: 'KL (behaviour → current policy)',
    description: 'Mean per-token KL estimate per learner step.',
    rows: (d) => d.learner.map((s) => ({ progress: rowProgress(s), y: s.kl })),
  },
  {
    id: 'in-group-std',
    title: 'In-group reward std',
    description: 'Mean over groups of the reward std inside each group; near 0, group-relative advantages vanish.',
    rows: (d) => d.curve.map((p) => ({ progress: curveProgress(p), y: p.meanInGroupRewardStd })),
  },
];

/**
 * A run's points of a metric on the axis, and how many of its rows have a value but no x there.
 * @param {Metric} metric
 * @param {RunData} data
 * @param {XAxis} axis
 */
export function metricPoints(metric, data, axis) {
  const startMs = runStartMs(data);
  /** @type {Array<[number, number]>} */
  const points = [];
  let leftOut = 0;
  for (const { progress, y } of metric.rows(data)) {
    if (y === null || !Number.isFinite(y)) continue;
    const x = xOf(axis, progress, startMs);
    if (x === null || !Number.isFinite(x)) leftOut++;
    else points.push([x, y]);
  }
  return { points, leftOut };
}

/**
 * One x array for every run and one column per run, as a chart draws them: the union of the runs' x values in
 * order, each run's value where it has a point (the mean of its points at one x) and null elsewhere.
 * @param {ReadonlyArray<ReadonlyArray<readonly [number, number]>>} series
 * @returns {{ xs: number[], columns: Array<Array<number | null>> }}
 */
export function alignSeries(series) {
  const sums = series.map((points) => {
    /** @type {Map<number, { sum: number, n: number }>} */
    const at = new Map();
    for (const [x, y] of points) {
      const s = at.get(x) ?? { sum: 0, n: 0 };
      at.set(x, { sum: s.sum + y, n: s.n + 1 });
    }
    return at;
  });
  const xs = [...new Set(sums.flatMap((at) => [...at.keys()]))].sort((a, b) => a - b);
  const columns = sums.map((at) =>
    xs.map((x) => {
      const s = at.get(x);
      return s ? s.sum / s.n : null;
    }),
  );
  return { xs, columns };
}

/** An alert of a run on the axis (x null: no place there), in its run's colour. @typedef {{ x: number | null, color: string, runId: string, alert: AlertView }} AlertRow */
/** An alert with a place on the axis. @typedef {AlertRow & { x: number }} AlertMarker */

/**
 * Every alert of the runs with its x on the axis, in run order, then by x (those without one last), then by time.
 * @param {readonly RunData[]} runs
 * @param {XAxis} axis
 * @returns {AlertRow[]}
 */
export function alertRows(runs, axis) {
  const byX = (/** @type {AlertRow} */ a, /** @type {AlertRow} */ b) =>
    (a.x ?? Number.POSITIVE_INFINITY) - (b.x ?? Number.POSITIVE_INFINITY) || a.alert.eventTimeMs - b.alert.eventTimeMs;
  return runs.flatMap((data) => {
    const startMs = runStartMs(data);
    return data.alerts
      .map((alert) => {
        const x = xOf(axis, rowProgress(alert), startMs);
        return { x: x !== null && Number.isFinite(x) ? x : null, color: data.color, runId: data.runId, alert };
      })
      .sort(byX);
  });
}

/**
 * The alerts drawn on the charts: those with a place on the axis.
 * @param {readonly RunData[]} runs
 * @param {XAxis} axis
 * @returns {AlertMarker[]}
 */
export const alertMarkers = (runs, axis) => alertRows(runs, axis).filter(/** @returns {row is AlertMarker} */ (row) => row.x !== null);

/**
 * The x range all charts share: every point and marker, padded by 2 % (half a version on the version axis).
 * @param {readonly number[]} xs
 * @param {XAxis} axis
 * @returns {[number, number]}
 */
export function sharedRange(xs, axis) {
  if (xs.length === 0) return [0, 1];
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  if (axis === 'policyVersion') return [min - 0.5, max + 0.5];
  const pad = max > min ? (max - min) * 0.02 : Math.max(1, Math.abs(max) * 0.02);
  return [min - pad, max + pad];
}

/**
 * A count in few characters: 950, 12.5k, 1.2M.
 * @param {number} n
 */
export function compactCount(n) {
  const abs = Math.abs(n);
  const short = (/** @type {number} */ v, /** @type {string} */ unit) => `${(v < 100 ? v.toFixed(1) : v.toFixed(0)).replace(/\.0$/, '')}${unit}`;
  if (abs < 1000) return String(Math.round(n * 100) / 100);
  const sign = n < 0 ? '−' : '';
  return abs < 1_000_000 ? sign + short(abs / 1000, 'k') : sign + short(abs / 1_000_000, 'M');
}

/**
 * Seconds as m:ss, or h:mm:ss from an hour on.
 * @param {number} seconds
 */
export function formatDuration(seconds) {
  const total = Math.round(Math.abs(seconds));
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  return `${seconds < 0 ? '−' : ''}${h > 0 ? `${h}:${two(m)}` : String(m)}:${two(s)}`;
}

/**
 * A value of the axis as a label: env steps compact, versions as v12, wall time as a duration.
 * @param {XAxis} axis
 * @param {number} value
 */
export function formatX(axis, value) {
  if (axis === 'envSteps') return compactCount(value);
  if (axis === 'policyVersion') return Number.isInteger(value) ? `v${value}` : '';
  return formatDuration(value);
}

/** @param {number} n @param {string} one @param {string} [many] */
const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a value lacks when it has no place on the axis. @type {Readonly<Record<XAxis, string>>} */
const X_MISSING = { envSteps: 'env-step count', policyVersion: 'policy version', wallTime: 'time' };

/**
 * How many of the run's values have no place on this axis, and so are left out of the charts.
 * @param {RunData} data
 * @param {XAxis} axis
 */
export const leftOutRows = (data, axis) => METRICS.reduce((n, metric) => n + metricPoints(metric, data, axis).leftOut, 0);

/**
 * The legend's line for a run: its state, its environment (of its steps, else of its evaluations), and what the page
 * holds of it.
 * @param {RunData} data
 * @param {XAxis} axis
 * @returns {{ state: 'error' | 'missing' | 'empty' | 'ok', text: string }}
 */
export function runSummary(data, axis) {
  if (data.error !== null) return { state: 'error', text: `Could not load this run: ${data.error}` };
  const rows = data.curve.length + data.learner.length + data.evaluations.length;
  if (data.run === null && rows === 0 && data.alerts.length === 0) return { state: 'missing', text: 'No such run: nothing was recorded under this id in the last year.' };
  const env = data.run?.envName ? `${data.run.envName} ${data.run.envVersion ?? ''}`.trim() : (data.evaluations[0]?.envName ?? 'environment not recorded');
  if (rows === 0) return { state: 'empty', text: `${env}; no rollout batches, learner steps or evaluations yet, so nothing to draw.` };
  const parts = [
    count(data.curve.length, 'curve point'),
    count(data.learner.length, 'learner step'),
    count(data.evaluations.length, 'evaluation'),
    count(data.alerts.length, 'alert'),
  ];
  const leftOut = leftOutRows(data, axis);
  const notes = [
    data.truncated ? 'more rows than one request returns: the first are shown' : '',
    leftOut > 0 ? `${count(leftOut, 'value')} without ${axis === 'envSteps' ? 'an' : 'a'} ${X_MISSING[axis]} left out` : '',
  ].filter((note) => note !== '');
  return { state: 'ok', text: `${env}; ${parts.join(' · ')}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}.` };
}
