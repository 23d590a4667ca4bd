// Live updates of one run from GET /v1/events (server-sent events: rollout-stats, learner-step, alert, evaluation).
// An EventSource does the work, reconnecting by itself and resuming with Last-Event-ID. EventSource cannot
// send an Authorization header, so when the page holds a token the same stream is read through fetch.
import { authHeaders, enc, token } from './api.js';

export const EVENT_TYPES = ['rollout-stats', 'learner-step', 'alert', 'evaluation'];

/**
 * Subscribes to a run's events from sinceMs on. `onEvent(type, data)` gets each event; `onStatus(text)`
 * says whether the stream is live. Returns a function that ends the subscription.
 */
export function subscribe(runId, sinceMs, onEvent, onStatus) {
  const url = `/v1/events?runId=${enc(runId)}&sinceMs=${Math.max(0, Math.floor(sinceMs))}`;
  return token() ? fetchStream(url, onEvent, onStatus) : eventSource(url, onEvent, onStatus);
}

function eventSource(url, onEvent, onStatus) {
  const source = new EventSource(url);
  onStatus('connecting…');
  source.addEventListener('ready', () => onStatus('live'));
  source.addEventListener('problem', (e) => onStatus(`live, but ${JSON.parse(e.data).detail}`));
  for (const type of EVENT_TYPES) source.addEventListener(type, (e) => onEvent(type, JSON.parse(e.data)));
  source.onerror = () => onStatus(source.readyState === EventSource.CLOSED ? 'disconnected (reload to retry)' : 'reconnecting…');
  return () => source.close();
}

/** The same stream over fetch, for a page that holds a token; reconnects after 2 s, resuming like EventSource. */
function fetchStream(url, onEvent, onStatus) {
  const abort = new AbortController();
  let lastId = null;
  const dispatch = (block) => {
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) type = line.slice(7);
      else if (line.startsWith('id: ')) lastId = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) return;
    if (type === 'ready') onStatus('live');
    else if (type === 'problem') onStatus(`live, but ${JSON.parse(data.join('\n')).detail}`);
    else if (EVENT_TYPES.includes(type)) onEvent(type, JSON.parse(data.join('\n')));
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
          let cut;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            dispatch(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
          }
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        onStatus(`reconnecting… (${error.message})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  void run();
  return () => abort.abort();
}
