// @ts-check
// The dashboard's entry: hash routes to pages, one page at a time. Each page gets an AbortSignal (its
// requests end when the user navigates away) and returns dispose() for its timers and streams.
//   #/                                        runs
//   #/runs/<runId>                            one run: curves, collapse panel, trajectories
//   #/runs/<runId>/trajectories/<episodeId>   the trajectory inspector
//   #/compare?runs=<runId>,<runId>…&x=<axis>  runs compared, one line per run on each chart
//   #/ops                                     consumer lag, throughput, dead letters
import { ApiError, isAbort, setToken, token } from './api.js';
import { renderCompare } from './compare.js';
import { h } from './dom.js';
import { renderOps } from './ops.js';
import { renderRun } from './run.js';
import { renderRuns } from './runs.js';
import { renderTrajectory } from './trajectory.js';
/** @import { Page, PageContext, Route } from './page-types.js' */

/**
 * The element of index.html with this id, checked to be of the type the page expects.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function element(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`index.html has no ${type.name} with id ${id}`);
  return el;
}

const view = element('view', HTMLElement);
const tokenForm = element('token-form', HTMLFormElement);
const tokenInput = element('token-input', HTMLInputElement);
/** @type {{ abort: AbortController, page: Page } | null} */
let current = null;

/**
 * A hash's route; what follows a '?' is the query, which only the comparison reads (no id has a '?').
 * @param {string} hash
 * @returns {Route}
 */
function parseRoute(hash) {
  const at = hash.indexOf('?');
  const path = at < 0 ? hash : hash.slice(0, at);
  /** @type {string[]} */
  let parts;
  try {
    parts = path
      .replace(/^#\/?/, '')
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
  } catch {
    return { page: 'missing' };
  }
  const [section, runId, sub, episodeId] = parts;
  if (section === undefined) return { page: 'runs' };
  if (section === 'ops' && runId === undefined) return { page: 'ops' };
  if (section === 'compare' && runId === undefined) return { page: 'compare', search: at < 0 ? '' : hash.slice(at + 1) };
  if (section === 'runs' && runId !== undefined && sub === undefined) return { page: 'run', runId };
  if (section === 'runs' && runId !== undefined && sub === 'trajectories' && episodeId !== undefined && parts.length === 4) return { page: 'trajectory', runId, episodeId };
  return { page: 'missing' };
}

/** @param {HTMLElement} root */
function renderMissing(root) {
  const heading = h('h1', { tabindex: -1 }, 'Page not found');
  root.append(heading, h('p', {}, h('a', { href: '#/' }, 'Back to the runs')));
  return { title: 'Not found', heading, dispose() {} };
}

/**
 * The route's page, rendered into `root`.
 * @param {HTMLElement} root
 * @param {Route} route
 * @param {PageContext} context
 * @returns {Page}
 */
function render(root, route, context) {
  switch (route.page) {
    case 'runs':
      return renderRuns(root, route, context);
    case 'run':
      return renderRun(root, route, context);
    case 'trajectory':
      return renderTrajectory(root, route, context);
    case 'compare':
      return renderCompare(root, route, context);
    case 'ops':
      return renderOps(root, route, context);
    case 'missing':
      return renderMissing(root);
  }
}

/** @param {unknown} error */
function showError(error) {
  if (isAbort(error)) return;
  const auth = error instanceof ApiError && (error.status === 401 || error.status === 403);
  if (auth) tokenForm.hidden = false;
  const text = auth
    ? `This server needs an API token for reads (${error.detail}). Enter it above.`
    : error instanceof ApiError
      ? error.detail
      : `Something went wrong: ${error instanceof Error ? error.message : String(error)}`;
  view.querySelector('.page-error')?.remove();
  view.prepend(h('p', { class: 'error page-error', role: 'alert' }, text));
}

function navigate() {
  current?.abort.abort();
  current?.page.dispose();
  view.replaceChildren();
  const route = parseRoute(location.hash);
  const abort = new AbortController();
  const page = render(view, route, { signal: abort.signal, onError: showError });
  current = { abort, page };
  document.title = `${page.title} · trajflow`;
  for (const link of document.querySelectorAll('header nav a')) {
    const active = (link.getAttribute('href') === '#/ops') === (route.page === 'ops');
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  page.heading?.focus({ preventScroll: true });
}

tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  setToken(tokenInput.value.trim());
  tokenInput.value = '';
  tokenForm.hidden = true;
  navigate();
});
if (token()) tokenForm.hidden = true;

window.addEventListener('hashchange', navigate);
navigate();
