// @ts-check
// The run page's tables: pass@k by k (latest batch and pooled), and the newest trajectories under a line on how
// the run's episodes ended.
import { enc } from './api.js';
import { fmt, fmtTime, h, pct, table } from './dom.js';
/** @import { EpisodeOutcomes, PassAtKResponse, TrajectoriesResponse } from './types.js' */

/**
 * The pass@k table, or a line saying there is none yet.
 * @param {PassAtKResponse} pass
 * @returns {HTMLElement}
 */
export function passTableContent(pass) {
  if (pass.byK.length === 0) return h('p', { class: 'empty' }, 'No pass@k values reported yet.');
  return table(
    `pass@k and pass^k: the latest batch${pass.latest ? ` (${fmtTime(pass.latest.eventTimeMs)})` : ''} and all ${pass.overall.batches} batches pooled`,
    ['k', 'pass@k latest', 'pass^k latest', 'pass@k pooled', 'pass^k pooled'],
    pass.byK.map((row) => [String(row.k), pct(row.latestPassAtK), pct(row.latestPassHatK), pct(row.overallPassAtK), pct(row.overallPassHatK)]),
  );
}

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
 * The outcome lines, then the newest trajectories (each linking to its inspector) or a line saying there are none.
 * @param {string} runId
 * @param {TrajectoriesResponse} body
 * @param {EpisodeOutcomes} outcomes
 * @returns {HTMLElement[]}
 */
export function trajectoriesContent(runId, body, outcomes) {
  const summary = outcomesSummary(outcomes);
  if (body.trajectories.length === 0) return [...summary, h('p', { class: 'empty' }, 'No assembled trajectories yet.')];
  return [
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
  ];
}
