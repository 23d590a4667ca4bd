// Requests shared by every caller they can serve, a few in flight at once: a caller is served only by a request
// sent after it asked. A caller starts a request of its own while fewer than `maxInFlight` are in flight;
// otherwise it joins the one queued request, sent when a slot frees, which every caller asking meanwhile shares.
// The read barrier's watermarks go through it (episode-log.ts).
interface Queued<T> {
  readonly promise: Promise<T>;
  readonly start: () => void;
}

export class SharedFetch<T> {
  private inFlight = 0;
  private queued: Queued<T> | null = null;

  constructor(
    private readonly fetch: () => Promise<T>,
    private readonly maxInFlight = 1,
  ) {
    if (!(maxInFlight >= 1)) throw new RangeError(`maxInFlight must be ≥ 1, got ${maxInFlight}`);
  }

  /** A result fetched by a request sent after this call. */
  get(): Promise<T> {
    if (this.inFlight < this.maxInFlight) return this.send();
    if (!this.queued) {
      let start!: () => void;
      const promise = new Promise<T>((resolve, reject) => {
        start = () => this.send().then(resolve, reject);
      });
      this.queued = { promise, start };
    }
    return this.queued.promise;
  }

  private send(): Promise<T> {
    this.inFlight++;
    return this.fetch().finally(() => {
      this.inFlight--;
      const next = this.queued;
      this.queued = null;
      next?.start();
    });
  }
}
