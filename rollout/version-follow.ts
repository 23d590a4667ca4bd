// What following the policy versions has seen, as pure transitions: the offsets handled (so a consumer
// started again after a broker outage skips them), the partitions whose versions from before following
// began are not all handled yet, and the outages in a row. follow-policy-versions.ts does the Kafka I/O around it.
import { isKafkaOutage } from '../streams/index.js';

export interface FollowState {
  /** The offset of the last record per partition when following began (-1: the partition was empty). */
  readonly lastAtStart: ReadonlyMap<number, bigint>;
  /** Partitions with records from before following began that are not handled yet. */
  readonly pending: ReadonlySet<number>;
  /** The highest offset handled per partition. */
  readonly handledUpTo: ReadonlyMap<number, bigint>;
  /** Broker outages since a version was last handled. */
  readonly failures: number;
}

export interface Backoff {
  /** Wait before reconnect n (from 1): min(maxBackoffMs, baseBackoffMs · 2^(n−1)). */
  readonly baseBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** What to do when the stream fails: report an error that is not an outage, or follow again after a wait. */
export type StreamFailure = { readonly kind: 'report' } | { readonly kind: 'reconnect'; readonly waitMs: number; readonly line: string };

export function initialFollowState(lastAtStart: ReadonlyMap<number, bigint>): FollowState {
  const pending = new Set([...lastAtStart].filter(([, last]) => last >= 0n).map(([partition]) => partition));
  return { lastAtStart, pending, handledUpTo: new Map(), failures: 0 };
}

/** True once every record on the topic when following began has been handled. */
export const isCaughtUp = (state: FollowState): boolean => state.pending.size === 0;

/** Whether a record was handled already (read again by a consumer started after an outage). */
export function handledAlready(state: FollowState, partition: number, offset: bigint): boolean {
  return offset <= (state.handledUpTo.get(partition) ?? -1n);
}

/** The record at `offset` of `partition` has been handed on (or was another run's). */
export function recordHandled(state: FollowState, partition: number, offset: bigint): FollowState {
  return { ...state, handledUpTo: new Map(state.handledUpTo).set(partition, offset) };
}

/** A handled record came out of the stream: the outage count restarts, and its partition may be caught up. */
export function versionReached(state: FollowState, partition: number, offset: bigint): FollowState {
  const done = state.pending.has(partition) && offset >= (state.lastAtStart.get(partition) ?? -1n);
  const pending = done ? new Set([...state.pending].filter((p) => p !== partition)) : state.pending;
  return { ...state, pending, failures: 0 };
}

/** The stream failed with `error`: a broker outage counts one more failure and waits longer each time. */
export function streamFailed(state: FollowState, error: unknown, backoff: Backoff): { state: FollowState; failure: StreamFailure } {
  if (!isKafkaOutage(error)) return { state, failure: { kind: 'report' } };
  const failures = state.failures + 1;
  const waitMs = Math.min(backoff.maxBackoffMs, backoff.baseBackoffMs * 2 ** Math.min(10, failures - 1));
  const line = `actors: the policy-version stream lost the broker (${error instanceof Error ? error.message : String(error)}); following again in ${waitMs} ms, from the versions not handled yet`;
  return { state: { ...state, failures }, failure: { kind: 'reconnect', waitMs, line } };
}
