// @ts-check
// The list of runs (GET /v1/runs), newest activity first, refreshed every 15 s. Ticking runs and pressing
// "Compare" opens them side by side (#/compare); the ticks survive the refreshes, in the order they were made.
import { enc, getJson } from './api.js';
import { DEFAULT_X, selectionHash, selectionNote } from './compare-data.js';
import { fmtTime, h, pct, table } from './dom.js';
/** @import { Page, PageContext } from './page-types.js' */
/** @import { RunView } from './types.js' */

const REFRESH_MS = 15_000;

/**
 * The compare bar: the button and the line saying what the ticks allow; update() follows the ticked runs.
 * @param {ReadonlySet<string>} ticked
 */
function compareBar(ticked) {
  const note = h('span', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'button', class: 'compare-button', onclick: () => (location.hash = selectionHash({ runIds: [...ticked], x: DEFAULT_X })) }, 'Compare');
  const update = () => {
    const { ok, text } = selectionNote(ticked.size);
    button.disabled = !ok;
    note.textContent = text;
  };
  update();
  return { node: h('div', { class: 'compare-bar' }, button, ' ', note), update };
}

/**
 * The table of runs, each with a tick box for the comparison.
 * @param {readonly RunView[]} runs
 * @param {boolean} truncated
 * @param {Set<string>} ticked
 * @param {() => void} onTick
 */
function runsTable(runs, truncated, ticked, onTick) {
  const tick = (/** @type {string} */ runId) =>
    h('input', {
      type: 'checkbox',
      'data-compare-run': runId,
      'aria-label': `Compare run ${runId}`,
      checked: ticked.has(runId),
      onchange: (/** @type {Event} */ event) => {
        if (event.target instanceof HTMLInputElement && event.target.checked) ticked.add(runId);
        else ticked.delete(runId);
        onTick();
      },
    });
  return table(
    `${runs.length} run${runs.length === 1 ? '' : 's'}${truncated ? ' (the 200 most recent)' : ''}`,
    ['Compare', 'Run', 'Environment', 'Last event', 'Episodes', 'Success', 'Rollout batches', 'Learner steps', 'Policy version'],
    runs.map((run) => [
      tick(run.runId),
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
  );
}

/**
 * @param {HTMLElement} root
 * @param {unknown} _route
 * @param {PageContext} context
 * @returns {Page}
 */
export function renderRuns(root, _route, { signal, onError }) {
  const heading = h('h1', { tabindex: -1 }, 'Runs');
  const body = h('div', {}, h('p', {}, 'Loading…'));
  /** @type {Set<string>} */
  const ticked = new Set();
  const bar = compareBar(ticked);
  root.append(
    heading,
    h('p', { class: 'hint' }, 'Runs with events in the last 30 days. Open one for its learning curves, collapse warnings and trajectories, or tick several and compare them.'),
    bar.node,
    body,
  );

  async function load() {
    const { runs, truncated } = await getJson('/v1/runs?limit=200', { signal });
    if (runs.length === 0) {
      body.replaceChildren(h('p', { class: 'empty' }, 'No runs yet. Start one with `trajflow train`, or publish steps to POST /v1/steps.'));
      return;
    }
    body.replaceChildren(runsTable(runs, truncated, ticked, bar.update));
  }

  load().catch(onError);
  const timer = setInterval(() => load().catch(onError), REFRESH_MS);
  return { title: 'Runs', heading, dispose: () => clearInterval(timer) };
}
