// Which offsets of each partition a consumer delivers, and when it has read them all: a replay reads from
// its start offsets (earlier messages are skipped) up to its end offsets (exclusive), then completes. Pure
// (no kafkajs), so topic-consumer.ts only asks it.

/** One partition's offsets to deliver: from `start` (inclusive) to `end` (exclusive); an absent bound is open. */
export interface ReadRange {
  readonly start: bigint | undefined;
  readonly end: bigint | undefined;
}

/** Where a message's offset lies against its partition's range. */
export type RangePosition = 'before-start' | 'in-range' | 'past-end';

export function positionIn(range: ReadRange, offset: bigint): RangePosition {
  if (range.end !== undefined && offset >= range.end) return 'past-end';
  if (range.start !== undefined && offset < range.start) return 'before-start';
  return 'in-range';
}

/** True when a message at `offset` (or a batch ending there) reaches the end of the range. */
export function reachesEnd(range: ReadRange, offset: bigint): boolean {
  return range.end !== undefined && offset + 1n >= range.end;
}

/** The ranges of every partition (by "topic/partition"), and which were read to their end. */
export class ReadRanges {
  private readonly finished = new Set<string>();

  constructor(
    private readonly starts: ReadonlyMap<string, bigint> | undefined,
    private readonly ends: ReadonlyMap<string, bigint> | undefined,
  ) {}

  of(key: string): ReadRange {
    return { start: this.starts?.get(key), end: this.ends?.get(key) };
  }

  /** The partition was read to its end. */
  finish(key: string): void {
    this.finished.add(key);
  }

  /** True when end offsets are given and every partition's range is empty (each end at or before its start). */
  get empty(): boolean {
    const ends = this.ends;
    return ends !== undefined && [...ends].every(([key, end]) => !this.hasOffsets(key, end));
  }

  /** True when end offsets are given and every partition with offsets to read was read to its end. */
  get allRead(): boolean {
    const ends = this.ends;
    if (!ends) return false;
    for (const [key, end] of ends) {
      if (!this.finished.has(key) && this.hasOffsets(key, end)) return false;
    }
    return true;
  }

  /** True when partition `key` has offsets to read before `end` (its start offset, or 0, is below it). */
  private hasOffsets(key: string, end: bigint): boolean {
    return end > (this.starts?.get(key) ?? 0n);
  }
}

/**
 * Says when a synchronous pass over a fetched batch has held the event loop for `yieldAfterMs`, so the
 * consumer lets it run. The clock is asked every 32 messages only.
 */
export class SliceClock {
  private sinceCheck = 0;
  private sliceStart: number;

  constructor(
    private readonly yieldAfterMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.sliceStart = now();
  }

  /** Called once per message: true when the slice is over (the caller yields, then calls restart()). */
  due(): boolean {
    if (++this.sinceCheck !== 32) return false;
    this.sinceCheck = 0;
    return this.now() - this.sliceStart > this.yieldAfterMs;
  }

  restart(): void {
    this.sliceStart = this.now();
  }
}
