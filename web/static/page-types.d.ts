// The shapes the dashboard's own modules share (its pages and DOM helpers), for the type checker only: the
// modules name these types in JSDoc and the page never loads this file. The API's JSON is in types.d.ts.

/**
 * An attribute's value for h(): false, null and undefined leave it out, true sets it empty; a function under an
 * `on…` name is an event listener.
 */
export type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);

export type Attrs = Readonly<Record<string, AttrValue>>;

/** What an element may hold: nodes, text and numbers (as text), arrays of them; false, null and undefined are skipped. */
export type Child = Node | string | number | false | null | undefined | readonly Child[];

/** What a page gets besides its root and route: the signal that ends its requests, and where errors go. */
export interface PageContext {
  readonly signal: AbortSignal;
  readonly onError: (error: unknown) => void;
}

/** A hash route: which page, and the ids in its path (and the comparison's query). */
export type Route =
  | { readonly page: 'runs' }
  | { readonly page: 'ops' }
  | { readonly page: 'missing' }
  | { readonly page: 'run'; readonly runId: string }
  /** The comparison of runs; `search` is the hash's query (runs=…&x=…), which the page reads itself. */
  | { readonly page: 'compare'; readonly search: string }
  | { readonly page: 'trajectory'; readonly runId: string; readonly episodeId: string };

/** What a page gives back: its title, the heading to focus, and dispose() for its timers and streams. */
export interface Page {
  readonly title: string;
  readonly heading: HTMLElement;
  dispose(): void;
}
