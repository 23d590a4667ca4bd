// The open event streams of GET /v1/events, counted in all and per client, and whether one more may open:
// the bookkeeping and the decision without sockets, so the limits are tested on their own.
import { HttpProblem, problemTypes } from '../core/problem.js';

export interface SlotLimits {
  readonly maxStreams: number;
  readonly maxStreamsPerClient: number;
}

/** The 503 for one more stream when `open` are open in all and `clientOpen` for its client; undefined when it may open. */
export function slotRefusal(open: number, clientOpen: number, limits: SlotLimits): HttpProblem | undefined {
  if (open >= limits.maxStreams) {
    return new HttpProblem(problemTypes.tooManyStreams, `${limits.maxStreams} event streams are open, the most this server keeps; retry later`, {}, { 'Retry-After': '10' });
  }
  if (clientOpen >= limits.maxStreamsPerClient) {
    return new HttpProblem(
      problemTypes.tooManyStreams,
      `this client has ${limits.maxStreamsPerClient} event streams open, the most one client may; close one, or retry later`,
      {},
      { 'Retry-After': '10' },
    );
  }
  return undefined;
}

/** Each open stream and the client it counts against. */
export class StreamSlots<K> {
  private readonly owners = new Map<K, string>();
  private readonly perClient = new Map<string, number>();

  get size(): number {
    return this.owners.size;
  }

  has(key: K): boolean {
    return this.owners.has(key);
  }

  keys(): K[] {
    return [...this.owners.keys()];
  }

  /** Why `client` may not open one more stream now, or undefined. */
  refusal(client: string, limits: SlotLimits): HttpProblem | undefined {
    return slotRefusal(this.owners.size, this.perClient.get(client) ?? 0, limits);
  }

  take(key: K, client: string): void {
    this.owners.set(key, client);
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
  }

  /** Frees the stream's slot; a stream already released is left alone. */
  release(key: K): void {
    const client = this.owners.get(key);
    if (client === undefined) return;
    this.owners.delete(key);
    const left = (this.perClient.get(client) ?? 1) - 1;
    if (left > 0) this.perClient.set(client, left);
    else this.perClient.delete(client);
  }

  clear(): void {
    this.owners.clear();
    this.perClient.clear();
  }
}
