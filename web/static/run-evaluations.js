// @ts-check
// The held-out evaluation panel: greedy success by policy version beside the random policy's line, and a line
// that sums up the latest evaluation.
import { pct } from './dom.js';
/** @import { ChartOf } from './run-curves.js' */
/** @import { EvaluationView } from './types.js' */

/**
 * @param {ChartOf} chart
 * @param {readonly EvaluationView[]} evaluations in policy-version order
 */
export function heldOutChart(chart, evaluations) {
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
}

/**
 * The summary line: how many versions were evaluated and how the latest did, or that there is none yet.
 * @param {HTMLElement} note
 * @param {readonly EvaluationView[]} evaluations in policy-version order
 */
export function showEvaluationSummary(note, evaluations) {
  const latest = evaluations.at(-1);
  note.className = latest ? 'hint' : 'empty';
  note.setAttribute('data-evaluations', String(evaluations.length));
  note.textContent = latest
    ? `${evaluations.length} policy version${evaluations.length === 1 ? '' : 's'} evaluated; v${latest.policyVersion}: greedy ${pct(latest.greedySuccess)} of ${latest.tasks} held-out tasks, random policy ${pct(latest.randomSuccess)}.`
    : 'No held-out evaluation of this run yet.';
}
