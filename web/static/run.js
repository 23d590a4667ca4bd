// @ts-check
// One run: learning curves, held-out evaluations by policy version, the collapse panel with its alerts, and
// the run's trajectories, kept current by the run's event stream. The data lives in `state`; every change
// schedules one redraw of all charts.
import { enc, getJson } from './api.js';
import { createTimeChart, createVersionChart } from './charts.js';
import { alertsTable, spikeFlags } from './collapse.js';
import { fmt, fmtTime, h, pct, table } from './dom.js';
import { subscribe } from './live.js';
/** @import { Chart, ChartSpec, TimePage } from './charts.js' */
/** @import { Page, PageContext } from './page-types.js' */
/** @import { AlertView, CurvePoint, EpisodeOutcomes, EvaluationView, LearnerMetricsView, OnLiveEvent, RolloutStatsView } from './types.js' */
/** @typedef {{ [K in keyof CurvePoint]: CurvePoint[K] extends number | null ? K : never }[keyof CurvePoint]} CurveField a field of the curve with a number */

/** The stream starts this long before the newest row loaded, so rows stored a little late are not missed. */
const STREAM_OVERLAP_MS = 60_000;
/** Points kept per series while the page stays open (the oldest go first). */
const MAX_POINTS = 5000;

const seconds = (/** @type {number} */ ms) => ms / 1000;
const byTime = (/** @type {CurvePoint} */ a, /** @type {CurvePoint} */ b) => a.timeMs - b.timeMs;

/**
 * A curve point from a live rollout-stats row: the batch as one point, as the curve has it without buckets (the
 * run's cumulative env steps are not known from one row).
 * @param {RolloutStatsView} row
 * @returns {CurvePoint}
 */
function pointOfBatch(row) {
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
function upsert(list, item, key) {
  const at = list.findIndex((x) => key(x) === key(item));
  if (at >= 0) list[at] = item;
  else list.push(item);
}

/**
 * A learner step's template-collapse scores, when it has them: MI over its upper bound log N, retrieval accuracy and
 * chance. Null for a step the cross-scoring skipped.
 * @param {LearnerMetricsView} step
 */
function templateScores(step) {
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
const sortedKs = (points, field) => [...new Set(points.flatMap((p) => Object.keys(p[field] ?? {})))].sort((a, b) => Number(a) - Number(b));

/**
 * How the run's episodes ended, and — for a run fed by the OpenAI-compatible gateway — how many its agents finished
 * and how many timed out (the gateway publishes those as truncated; docs/design/gateway-recording.md).
 * @param {EpisodeOutcomes} outcomes
 */
function outcomesSummary({ trajectories: t, gateway: g }) {
  const lines = [
    h(
      'p',
      { class: 'episode-outcomes', 'data-terminated': t.terminated, 'data-truncated': t.truncated, 'data-incomplete': t.incomplete },
      `Episodes assembled: ${t.terminated} terminated, ${t.truncated} truncated, ${t.incomplete} incomplete.`,
    ),
  ];
  if (g.finished + g.timedOut > 0) {
    lines.push(
      h(
        'p',
        { class: g.timedOut > 0 ? 'gateway-outcomes warn' : 'gateway-outcomes', 'data-finished': g.finished, 'data-timed-out': g.timedOut },
        `Through the gateway: ${g.finished} finished by the agent, ${g.timedOut} timed out (no call and no finish in time; recorded as truncated).`,
      ),
    );
  }
  return lines;
}

/**
 * @param {HTMLElement} root
 * @param {{ readonly runId: string }} route
 * @param {PageContext} context
 * @returns {Page}
 */
export function renderRun(root, { runId }, { signal, onError }) {
  /** @type {{ curve: CurvePoint[], bucketMs: number | null, learner: LearnerMetricsView[], alerts: AlertView[], evaluations: EvaluationView[] }} */
  const state = { curve: [], bucketMs: null, learner: [], alerts: [], evaluations: [] };
  /** @type {Map<string, { key: string, chart: Chart }>} */
  const charts = new Map();
  const heading = h('h1', { tabindex: -1 }, 'Run ', h('code', {}, runId));
  const liveStatus = h('p', { class: 'live', role: 'status', 'data-live': 'off' }, 'Live updates: starting…');
  const curveNote = h('p', { class: 'hint' });
  // One slot per chart, so the charts keep this order whichever data arrives first.
  /** @type {Map<string, HTMLDivElement>} */
  const slots = new Map();
  const grid = (/** @type {string[]} */ ids) =>
    h(
      'div',
      { class: 'charts' },
      ids.map((id) => {
        const slot = h('div', { class: 'slot' });
        slots.set(id, slot);
        return slot;
      }),
    );
  const curveGrid = grid(['reward', 'success', 'pass', 'closed']);
  const passTable = h('div', { class: 'pass-table' });
  const evaluationGrid = grid(['held-out']);
  const evaluationNote = h('p', { class: 'empty', 'data-evaluations': 0 }, 'Loading…');
  const collapseGrid = grid(['in-group-std', 'entropy', 'template', 'grad-norm', 'length', 'importance', 'staleness']);
  const alertsBox = h('div', { class: 'alerts-box' });
  const trajectoriesBox = h('div', {}, h('p', {}, 'Loading…'));
  root.append(
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Runs'), ' › ', runId),
    heading,
    liveStatus,
    h('section', { 'aria-labelledby': 'curves-h' }, h('h2', { id: 'curves-h' }, 'Learning curves'), curveNote, curveGrid, passTable),
    h('section', { 'aria-labelledby': 'evaluation-h' }, h('h2', { id: 'evaluation-h' }, 'Held-out evaluation'), evaluationNote, evaluationGrid),
    h(
      'section',
      { 'aria-labelledby': 'collapse-h' },
      h('h2', { id: 'collapse-h' }, 'Collapse early warnings'),
      h('p', { class: 'hint' }, 'The Echo Trap shows first as in-group reward std falling, then entropy dropping, then gradient-norm spikes. Dashed lines mark alerts.'),
      collapseGrid,
      h('h3', {}, 'Alerts'),
      alertsBox,
    ),
    h('section', { 'aria-labelledby': 'trajectories-h' }, h('h2', { id: 'trajectories-h' }, 'Trajectories'), trajectoriesBox),
  );

  /** @type {TimePage} */
  const page = {
    sync: `run:${runId}`,
    markers: () => state.alerts.map((a) => ({ t: seconds(a.eventTimeMs), severity: a.severity })),
    xRange() {
      const times = [...state.curve.map((p) => p.timeMs), ...state.learner.map((s) => s.eventTimeMs), ...state.alerts.map((a) => a.eventTimeMs)];
      if (times.length === 0) return [seconds(Date.now() - 3_600_000), seconds(Date.now())];
      const min = Math.min(...times);
      const max = Math.max(...times);
      const pad = Math.max(1000, (max - min) * 0.03);
      return [seconds(min - pad), seconds(max + pad)];
    },
  };

  /**
   * Creates the chart once (again when its series change, as when a new k appears).
   * @param {ChartSpec} spec
   */
  function chart(spec) {
    const parent = slots.get(spec.id);
    if (!parent) throw new Error(`No place on the page for the chart ${spec.id}`);
    const key = `${spec.id}|${spec.series.map((s) => s.label).join(',')}`;
    const existing = charts.get(spec.id);
    if (existing?.key === key) return existing.chart;
    existing?.chart.destroy();
    const created = spec.axis === 'version' ? createVersionChart(parent, spec) : createTimeChart(parent, spec, page);
    charts.set(spec.id, { key, chart: created });
    return created;
  }

  function drawCurves() {
    const points = state.curve;
    const xs = points.map((p) => seconds(p.timeMs));
    const col = (/** @type {CurveField} */ field) => points.map((p) => p[field] ?? null);
    chart({
      id: 'reward',
      title: 'Reward (mean ± std)',
      description: 'Mean trajectory reward per rollout batch; the band is one standard deviation.',
      series: [{ label: 'reward mean' }, { label: '+1 std', kind: 'band-edge', color: '#6e9fe8' }, { label: '−1 std', kind: 'band-edge', color: '#6e9fe8' }],
      band: [2, 3],
    }).update(xs, [col('rewardMean'), col('rewardHigh'), col('rewardLow')]);
    chart({
      id: 'success',
      title: 'Success rate',
      description: 'Successful trajectories / trajectories.',
      series: [{ label: 'success rate', color: '#1a7f37' }],
      yRange: [0, 1],
    }).update(xs, [col('successRate')]);
    const atKs = sortedKs(points, 'passAtK');
    const hatKs = sortedKs(points, 'passHatK');
    chart({
      id: 'pass',
      title: 'pass@k and pass^k',
      description: 'pass@k: at least one of k trials succeeds; pass^k: all k succeed (reliability).',
      series: [...atKs.map((k) => ({ label: `pass@${k}` })), ...hatKs.map((k) => ({ label: `pass^${k}`, dash: [6, 3] }))],
      yRange: [0, 1],
    }).update(xs, [...atKs.map((k) => points.map((p) => p.passAtK?.[k] ?? null)), ...hatKs.map((k) => points.map((p) => p.passHatK?.[k] ?? null))]);
    // Groups the assembly completed without waiting for all their members (docs/design/group-completion.md).
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
    closed.update(xs, [col('closedTimeout'), col('closedIdle')]);
    closed.figure.setAttribute('data-closed-timeout', String(closedTimeout));
    closed.figure.setAttribute('data-closed-idle', String(closedIdle));
    curveNote.textContent =
      state.bucketMs === null ? `${points.length} rollout batches, one point each.` : `${points.length} points, each pooling the batches of ${fmt(state.bucketMs / 1000, 0)} s.`;

    chart({
      id: 'in-group-std',
      title: 'In-group reward std',
      description: 'Mean over groups of the reward std inside each group; near 0, group-relative advantages vanish.',
      series: [{ label: 'in-group std', color: '#9a6700' }],
    }).update(xs, [col('meanInGroupRewardStd')]);
    chart({
      id: 'length',
      title: 'Response length (turns per trajectory)',
      description: 'Mean steps per trajectory (rollout stats meanLength).',
      series: [{ label: 'mean length', color: '#8250df' }],
    }).update(xs, [col('meanLength')]);
  }

  function drawLearner() {
    const steps = state.learner;
    const xs = steps.map((s) => seconds(s.eventTimeMs));
    const norms = steps.map((s) => s.gradNormPreClip);
    const flags = spikeFlags(norms);
    const spikes = flags.filter(Boolean).length;
    chart({ id: 'entropy', title: 'Policy entropy', description: 'Mean token entropy per learner step.', series: [{ label: 'entropy', color: '#0a7f86' }] }).update(xs, [
      steps.map((s) => s.entropy),
    ]);
    const grad = chart({
      id: 'grad-norm',
      title: 'Gradient norm (before clipping)',
      description: 'Red dots: spikes, over 3× the median of the 20 steps before.',
      series: [
        { label: 'grad norm', color: '#57606a' },
        { label: 'spike', kind: 'spikes', color: '#d1242f' },
      ],
      summary: () => `; ${spikes} spike${spikes === 1 ? '' : 's'}`,
    });
    grad.update(xs, [norms, norms.map((v, i) => (flags[i] ? v : null))]);
    grad.figure.setAttribute('data-spikes', String(spikes));
    // RAGEN-2 cross-scoring runs every few updates: only those steps are points.
    const scored = steps.map(templateScores).filter((t) => t !== null);
    chart({
      id: 'template',
      title: 'Input dependence (RAGEN-2 MI, retrieval)',
      description: 'Cross-scoring every few updates: Î(X;Z) / log N, and how often a reply scores highest under its own prompt, beside chance 1/N. Falling = template collapse.',
      series: [
        { label: 'MI / log N', color: '#0550ae' },
        { label: 'retrieval acc.', color: '#1a7f37' },
        { label: 'chance', color: '#8c959f', dash: [4, 4] },
      ],
      yRange: [0, 1],
    }).update(
      scored.map((t) => t.time),
      [scored.map((t) => t.mi), scored.map((t) => t.retrieval), scored.map((t) => t.chance)],
    );
    chart({
      id: 'importance',
      title: 'Importance weights',
      description: 'Mean and max of the truncated importance weights (off-policy correction).',
      series: [{ label: 'mean weight' }, { label: 'max weight', color: '#bc4c00' }],
    }).update(xs, [steps.map((s) => s.metrics?.importanceWeightMean ?? null), steps.map((s) => s.metrics?.importanceWeightMax ?? null)]);
    const dropped = steps.reduce((n, s) => n + (s.metrics?.droppedStale ?? 0), 0);
    const staleness = chart({
      id: 'staleness',
      title: 'Staleness (versions behind the learner)',
      description: 'Per update: the largest learner version − behaviour version among the samples trained, and the samples dropped as past --max-staleness (never trained).',
      series: [
        { label: 'max staleness', color: '#6639ba' },
        { label: 'dropped stale', color: '#d1242f' },
      ],
      summary: () => `; ${dropped} dropped stale`,
    });
    staleness.update(xs, [steps.map((s) => s.stalenessMax), steps.map((s) => s.metrics?.droppedStale ?? 0)]);
    staleness.figure.setAttribute('data-dropped-stale', String(dropped));
  }

  function drawEvaluations() {
    const evaluations = state.evaluations;
    chart({
      id: 'held-out',
      axis: 'version',
      title: 'Held-out success',
      description: 'Greedy success of each policy version on held-out tasks (never trained on); the dashed line is the random policy on the same tasks.',
      series: [
        { label: 'greedy success', color: '#1a7f37' },
        { label: 'random policy', kind: 'reference', color: '#8c959f' },
      ],
      yRange: [0, 1],
    }).update(
      evaluations.map((e) => e.policyVersion),
      [evaluations.map((e) => e.greedySuccess), evaluations.map((e) => e.randomSuccess)],
    );
    const latest = evaluations.at(-1);
    evaluationNote.className = latest ? 'hint' : 'empty';
    evaluationNote.setAttribute('data-evaluations', String(evaluations.length));
    evaluationNote.textContent = latest
      ? `${evaluations.length} policy version${evaluations.length === 1 ? '' : 's'} evaluated; v${latest.policyVersion}: greedy ${pct(latest.greedySuccess)} of ${latest.tasks} held-out tasks, random policy ${pct(latest.randomSuccess)}.`
      : 'No held-out evaluation of this run yet.';
  }

  let drawQueued = false;
  function draw() {
    if (drawQueued || signal.aborted) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      if (signal.aborted) return;
      state.curve = state.curve.sort(byTime).slice(-MAX_POINTS);
      state.learner = state.learner.sort((a, b) => a.step - b.step).slice(-MAX_POINTS);
      state.evaluations = state.evaluations.sort((a, b) => a.policyVersion - b.policyVersion).slice(-MAX_POINTS);
      drawCurves();
      drawEvaluations();
      drawLearner();
      alertsBox.replaceChildren(alertsTable(state.alerts));
    });
  }

  async function loadCurve() {
    const curve = await getJson(`/v1/runs/${enc(runId)}/curve?limit=1000`, { signal });
    state.curve = curve.points;
    state.bucketMs = curve.bucketMs;
  }

  async function loadPassTable() {
    const pass = await getJson(`/v1/runs/${enc(runId)}/pass-at-k?limit=1000`, { signal });
    if (pass.byK.length === 0) {
      passTable.replaceChildren(h('p', { class: 'empty' }, 'No pass@k values reported yet.'));
      return;
    }
    passTable.replaceChildren(
      table(
        `pass@k and pass^k: the latest batch${pass.latest ? ` (${fmtTime(pass.latest.eventTimeMs)})` : ''} and all ${pass.overall.batches} batches pooled`,
        ['k', 'pass@k latest', 'pass^k latest', 'pass@k pooled', 'pass^k pooled'],
        pass.byK.map((row) => [String(row.k), pct(row.latestPassAtK), pct(row.latestPassHatK), pct(row.overallPassAtK), pct(row.overallPassHatK)]),
      ),
    );
  }

  async function loadTrajectories() {
    const [body, outcomes] = await Promise.all([
      getJson(`/v1/runs/${enc(runId)}/trajectories?limit=50`, { signal }),
      getJson(`/v1/runs/${enc(runId)}/episode-outcomes`, { signal }),
    ]);
    const summary = outcomesSummary(outcomes);
    if (body.trajectories.length === 0) {
      trajectoriesBox.replaceChildren(...summary, h('p', { class: 'empty' }, 'No assembled trajectories yet.'));
      return;
    }
    trajectoriesBox.replaceChildren(
      ...summary,
      table(
        `The ${body.count} newest trajectories${body.truncated ? ' (more exist)' : ''}`,
        ['Episode', 'Group', 'Outcome', 'Steps', 'Total reward', 'Success', 'Policy versions', 'Ended'],
        body.trajectories.map((t) => [
          h('a', { href: `#/runs/${enc(runId)}/trajectories/${enc(t.episodeId)}` }, t.episodeId),
          t.groupId,
          t.outcome,
          String(t.stepCount),
          fmt(t.totalReward),
          t.success ? 'yes' : 'no',
          t.minPolicyVersion === t.maxPolicyVersion ? String(t.minPolicyVersion) : `${t.minPolicyVersion}–${t.maxPolicyVersion}`,
          fmtTime(t.lastEventTimeMs),
        ]),
        { class: 'trajectories' },
      ),
    );
  }

  // Live rows: per-batch curves take the batch as a point; bucketed curves are fetched again (throttled).
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
  /** @type {OnLiveEvent} */
  const onEvent = (type, data) => {
    if (type === 'rollout-stats') {
      if (state.bucketMs === null) upsert(state.curve, pointOfBatch(data), (p) => p.batchId);
      later(async () => {
        await Promise.all([state.bucketMs === null ? null : loadCurve(), loadPassTable()]);
      });
    } else if (type === 'learner-step') upsert(state.learner, data, (s) => s.step);
    else if (type === 'alert') upsert(state.alerts, data, (a) => a.alertId);
    else if (type === 'evaluation') upsert(state.evaluations, data, (e) => e.policyVersion);
    draw();
  };

  /** @type {() => void} */
  let unsubscribe = () => undefined;
  /** @type {number | undefined} */
  let resizeTimer;
  const onResize = () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => charts.forEach(({ chart: c }) => c.resize()), 150);
  };
  window.addEventListener('resize', onResize);

  (async () => {
    const [learner, alerts, evaluations] = await Promise.all([
      getJson(`/v1/runs/${enc(runId)}/learner-metrics?order=desc&limit=1000`, { signal }),
      getJson(`/v1/runs/${enc(runId)}/alerts?order=desc&limit=500`, { signal }),
      getJson(`/v1/runs/${enc(runId)}/evaluations?order=desc&limit=1000`, { signal }),
      loadCurve(),
    ]);
    state.learner = learner.learnerSteps.reverse();
    state.alerts = alerts.alerts;
    state.evaluations = evaluations.evaluations.reverse();
    draw();
    const newestEvaluation = state.evaluations.length > 0 ? Math.max(...state.evaluations.map((e) => e.eventTimeMs)) : undefined;
    const newest = [state.curve.at(-1)?.timeMs, state.learner.at(-1)?.eventTimeMs, state.alerts[0]?.eventTimeMs, newestEvaluation].filter((t) => t !== undefined);
    const since = (newest.length > 0 ? Math.min(...newest) : Date.now()) - STREAM_OVERLAP_MS;
    if (!signal.aborted) {
      unsubscribe = subscribe(runId, since, onEvent, (text) => {
        liveStatus.textContent = `Live updates: ${text}`;
        liveStatus.setAttribute('data-live', text === 'live' ? 'on' : 'off');
      });
    }
    await Promise.all([loadPassTable(), loadTrajectories()]);
  })().catch(onError);

  return {
    title: `Run ${runId}`,
    heading,
    dispose() {
      unsubscribe();
      clearTimeout(refetch);
      clearTimeout(resizeTimer);
      window.removeEventListener('resize', onResize);
      charts.forEach(({ chart: c }) => c.destroy());
    },
  };
}
