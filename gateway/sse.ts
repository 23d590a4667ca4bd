// Server-sent events as the gateway sends them: each event an optional `event:` line (the Responses and
// Messages streams name theirs) and its `data:` lines, then a blank line
// (https://html.spec.whatwg.org/multipage/server-sent-events.html). Pure.

export interface SseEvent {
  /** The event's name (`response.created`, `message_start`); chat and text chunks have none. */
  readonly event?: string;
  readonly data: string;
}

/** Data-only events, one per payload (the chat and text completion chunks, `[DONE]` last). */
export const dataEvents = (payloads: readonly string[]): SseEvent[] => payloads.map((data) => ({ data }));

/** An event object of the Responses and Messages streams: its `type` names it. */
export type TypedEvent = { readonly type: string } & Readonly<Record<string, unknown>>;

/** Named events whose data is the JSON of each object, named by its `type`. */
export const typedEvents = (objects: readonly TypedEvent[]): SseEvent[] => objects.map((object) => ({ event: object.type, data: JSON.stringify(object) }));

/** The wire text of a stream of events; a data with line breaks takes one `data:` line per line. */
export function sseText(events: readonly SseEvent[]): string {
  return events
    .map(({ event, data }) => {
      const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`);
      return `${event === undefined ? '' : `event: ${event}\n`}${lines.join('')}\n`;
    })
    .join('');
}
