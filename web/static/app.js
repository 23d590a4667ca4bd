// The dashboard's entry: hash routes to pages, one page at a time. Each page gets an AbortSignal (its
// requests end when the user navigates away) and returns dispose() for its timers and streams.
//   #/                                        runs
//   #/runs/<runId>                            one run: curves, collapse panel, trajectories
//   #/runs/<runId>/trajectories/<episodeId>   the trajectory inspector
//   #/ops                                     consumer lag, throughput, dead letters
import { ApiError, isAbort, setToken, token } from './api.js';
import { h } from './dom.js';
import { renderOps } from './ops.js';
import { renderRun } from './run.js';
import { renderRuns } from './runs.js';
import { renderTrajectory } from './trajectory.js';

const view = document.getElementById('view');
const tokenForm = document.getElementById('token-form');
const tokenInput = document.getElementById('token-input');
let current = null;

function parseRoute(hash) {
  let parts;
  try {
    parts = hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
  } catch {
    return { page: 'missing' };
  }
  if (parts.length === 0) return { page: 'runs' };
  if (parts.length === 1 && parts[0] === 'ops') return { page: 'ops' };
  if (parts[0] === 'runs' && parts.length === 2) return { page: 'run', runId: parts[1] };
  if (parts[0] === 'runs' && parts.length === 4 && parts[2] === 'trajectories') return { page: 'trajectory', runId: parts[1], episodeId: parts[3] };
  return { page: 'missing' };
}

const PAGES = {
  runs: renderRuns,
  run: renderRun,
  trajectory: renderTrajectory,
  ops: renderOps,
  missing: (root) => {
    const heading = h('h1', { tabindex: -1 }, 'Page not found');
    root.append(heading, h('p', {}, h('a', { href: '#/' }, 'Back to the runs')));
    return { title: 'Not found', heading, dispose() {} };
  },
};

function showError(error) {
  if (isAbort(error)) return;
  const auth = error instanceof ApiError && (error.status === 401 || error.status === 403);
  if (auth) tokenForm.hidden = false;
  const text = auth
    ? `This server needs an API token for reads (${error.detail}). Enter it above.`
    : error instanceof ApiError
      ? error.detail
      : `Something went wrong: ${error.message}`;
  view.querySelector('.page-error')?.remove();
  view.prepend(h('p', { class: 'error page-error', role: 'alert' }, text));
}

function navigate() {
  current?.abort.abort();
  current?.page.dispose();
  view.replaceChildren();
  const route = parseRoute(location.hash);
  const abort = new AbortController();
  const page = PAGES[route.page](view, route, { signal: abort.signal, onError: showError });
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
