// A small server-sent-events client over fetch for the tests: collects events as they arrive and waits for
// one that matches by polling what has arrived (never a fixed sleep).
import { waitFor } from '../helpers/kafka.js';

export interface SseEvent {
  readonly event: string;
  readonly id: string | null;
  readonly data: string;
}

export interface SseClient {
  readonly status: number;
  readonly headers: Headers;
  /** The body of a response that is not a stream (a problem). */
  readonly text: string;
  readonly events: SseEvent[];
  /** Comment lines (heartbeats). */
  readonly comments: string[];
  /** Resolves with the first event (already arrived or arriving) that matches, or fails after timeoutMs. */
  next(match: (event: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  /** True once the server ended the stream. */
  ended(): boolean;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let done = false;
  let text = '';
  if (response.ok && response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done: finished } = await reader.read();
          if (finished) break;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            let event = 'message';
            let id: string | null = null;
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('id: ')) id = line.slice(4);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
            }
            if (data.length > 0) events.push({ event, id, data: data.join('\n') });
          }
        }
      } catch {
        // aborted by close()
      } finally {
        done = true;
      }
    })();
  } else {
    text = await response.text();
    done = true;
  }
  return {
    status: response.status,
    headers: response.headers,
    text,
    events,
    comments,
    async next(match, what, timeoutMs = 10_000) {
      let found: SseEvent | undefined;
      await waitFor(() => (found = events.find(match)) !== undefined, what, timeoutMs, 20);
      return found!;
    },
    ended: () => done,
    close: () => abort.abort(),
  };
}
