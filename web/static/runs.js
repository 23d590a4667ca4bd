// @ts-check
// The list of runs (GET /v1/runs), newest activity first, refreshed every 15 s.
import { enc, getJson } from './api.js';
import { fmtTime, h, pct, table } from './dom.js';
/** @import { Page, PageContext } from './page-types.js' */

const REFRESH_MS = 15_000;

/**
 * @param {HTMLElement} root
 * @param {unknown} _route
 * @param {PageContext} context
 * @returns {Page}
 */
export function renderRuns(root, _route, { signal, onError }) {
  const heading = h('h1', { tabindex: -1 }, 'Runs');
  const body = h('div', {}, h('p', {}, 'Loading…'));
  root.append(heading, h('p', { class: 'hint' }, 'Runs with events in the last 30 days. Open one for its learning curves, collapse warnings and trajectories.'), body);

  async function load() {
    const { runs, truncated } = await getJson('/v1/runs?limit=200', { signal });
    if (runs.length === 0) {
      body.replaceChildren(h('p', { class: 'empty' }, 'No runs yet. Start one with `trajflow train`, or publish steps to POST /v1/steps.'));
      return;
    }
    body.replaceChildren(
      table(
        `${runs.length} run${runs.length === 1 ? '' : 's'}${truncated ? ' (the 200 most recent)' : ''}`,
        ['Run', 'Environment', 'Last event', 'Episodes', 'Success', 'Rollout batches', 'Learner steps', 'Policy version'],
        runs.map((run) => [
          h('a', { href: `#/runs/${enc(run.runId)}`, 'data-run-id': run.runId }, run.runId),
          run.envName === null ? '–' : `${run.envName} ${run.envVersion ?? ''}`,
          fmtTime(run.lastEventTimeMs),
          String(Math.max(run.episodes, run.assembledEpisodes)),
          run.assembledEpisodes === 0 ? '–' : pct(run.successfulEpisodes / run.assembledEpisodes),
          String(run.rolloutBatches),
          String(run.learnerSteps),
          run.latestPolicyVersion === null ? '–' : String(run.latestPolicyVersion),
        ]),
        { class: 'runs' },
      ),
    );
  }

  load().catch(onError);
  const timer = setInterval(() => load().catch(onError), REFRESH_MS);
  return { title: 'Runs', heading, dispose: () => clearInterval(timer) };
}
