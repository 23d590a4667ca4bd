// @ts-check
// Live updates of one run from GET /v1/events (server-sent events: rollout-stats, learner-step, alert, evaluation).
// An EventSource does the work, reconnecting by itself and resuming with Last-Event-ID. EventSource cannot
// send an Authorization header, so when the page holds a token the same stream is read through fetch.
import { authHeaders, enc, token } from './api.js';
/** @import { LiveEvent, LiveEventType, OnLiveEvent, Problem } from './types.js' */
/** @typedef {(text: string) => void} OnStatus */

/** @type {readonly LiveEventType[]} */
export const EVENT_TYPES = ['rollout-stats', 'learner-step', 'alert', 'evaluation'];

/** @returns {type is LiveEventType} */
const isEventType = (/** @type {string} */ type) => EVENT_TYPES.some((known) => known === type);

/**
 * An event's type and its parsed data; the data is trusted to be the view its type names (types.d.ts LiveEvents).
 * @param {LiveEventType} type
 * @param {string} data
 * @returns {LiveEvent}
 */
const liveEvent = (type, data) => /** @type {LiveEvent} */ ([type, JSON.parse(data)]);

/** @returns {Promise<void>} */
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The detail of a problem event's data. */
const problemDetail = (/** @type {string} */ data) => /** @type {Problem} */ (JSON.parse(data)).detail;

/**
 * Subscribes to a run's events from sinceMs on. `onEvent(type, data)` gets each event; `onStatus(text)`
 * says whether the stream is live. Returns a function that ends the subscription.
 * @param {string} runId
 * @param {number} sinceMs
 * @param {OnLiveEvent} onEvent
 * @param {OnStatus} onStatus
 * @returns {() => void}
 */
export function subscribe(runId, sinceMs, onEvent, onStatus) {
  const url = `/v1/events?runId=${enc(runId)}&sinceMs=${Math.max(0, Math.floor(sinceMs))}`;
  return token() ? fetchStream(url, onEvent, onStatus) : eventSource(url, onEvent, onStatus);
}

/**
 * @param {string} url
 * @param {OnLiveEvent} onEvent
 * @param {OnStatus} onStatus
 */
function eventSource(url, onEvent, onStatus) {
  const source = new EventSource(url);
  onStatus('connecting…');
  source.addEventListener('ready', () => onStatus('live'));
  source.addEventListener('problem', (e) => onStatus(`live, but ${problemDetail(e.data)}`));
  for (const type of EVENT_TYPES) source.addEventListener(type, (e) => onEvent(...liveEvent(type, e.data)));
  source.onerror = () => onStatus(source.readyState === EventSource.CLOSED ? 'disconnected (reload to retry)' : 'reconnecting…');
  return () => source.close();
}

/**
 * The same stream over fetch, for a page that holds a token; reconnects after 2 s, resuming like EventSource.
 * @param {string} url
 * @param {OnLiveEvent} onEvent
 * @param {OnStatus} onStatus
 */
function fetchStream(url, onEvent, onStatus) {
  const abort = new AbortController();
  /** @type {string | null} */
  let lastId = null;
  const dispatch = (/** @type {string} */ block) => {
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) type = line.slice(7);
      else if (line.startsWith('id: ')) lastId = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) return;
    if (type === 'ready') onStatus('live');
    else if (type === 'problem') onStatus(`live, but ${problemDetail(data.join('\n'))}`);
    else if (isEventType(type)) onEvent(...liveEvent(type, data.join('\n')));
  };
  const run = async () => {
    while (!abort.signal.aborted) {
      onStatus('connecting…');
      try {
        const headers = { Accept: 'text/event-stream', ...authHeaders(), ...(lastId ? { 'Last-Event-ID': lastId } : {}) };
        const response = await fetch(url, { headers, signal: abort.signal });
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          /** @type {number} */
          let cut;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            dispatch(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
          }
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        onStatus(`reconnecting… (${error instanceof Error ? error.message : String(error)})`);
      }
      await sleep(2000);
    }
  };
  void run();
  return () => abort.abort();
}
