// @ts-check
// The charts drawn from the learner's steps: entropy and gradient-norm spikes (the collapse panel), the RAGEN-2
// input-dependence scores, and the off-policy side (importance weights, staleness).
import { spikeFlags } from './collapse.js';
import { templateScores } from './run-data.js';
/** @import { ChartOf } from './run-curves.js' */
/** @import { LearnerMetricsView } from './types.js' */

/**
 * Entropy, and the gradient norm with its spikes marked and counted on the figure.
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly LearnerMetricsView[]} steps
 */
export function entropyAndGradCharts(chart, xs, steps) {
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
}

/**
 * RAGEN-2 cross-scoring runs every few updates: only those steps are points.
 * @param {ChartOf} chart
 * @param {readonly LearnerMetricsView[]} steps
 */
export function templateChart(chart, steps) {
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
}

/**
 * Importance weights, and staleness with the samples dropped as too stale counted on the figure.
 * @param {ChartOf} chart
 * @param {number[]} xs
 * @param {readonly LearnerMetricsView[]} steps
 */
export function offPolicyCharts(chart, xs, steps) {
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
