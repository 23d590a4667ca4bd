// What a weights reader's load() does next, decided from the version's state where the reader is now (pure; the
// reassembly itself is weights-chunks.ts, the Kafka I/O weights-topic.ts): hand the version out, fail, or wait.
import type { WeightsManifest, WeightsState } from './weights-chunks.js';

/** One load() call: the version asked for and how long it may take. */
export interface LoadRequest {
  readonly topic: string;
  readonly runId: string;
  readonly version: number;
  readonly timeoutMs: number;
  /** Date.now() past which load() gives up. */
  readonly deadline: number;
}

export type LoadStep =
  | { readonly kind: 'done'; readonly manifest: WeightsManifest; readonly bytes: Buffer }
  | { readonly kind: 'fail'; readonly message: string }
  | { readonly kind: 'wait'; readonly ms: number };

/**
 * The next step of load() at time `now`. A broken version fails only once the reader has read to the end of the
 * log (`atEnd`): it may be mended further on (a version written again after a crash).
 */
export function nextLoadStep(state: WeightsState, atEnd: boolean, now: number, request: LoadRequest): LoadStep {
  const { topic, runId, version, timeoutMs, deadline } = request;
  if (state.kind === 'complete') return { kind: 'done', manifest: state.manifest, bytes: state.bytes };
  if (state.kind === 'broken' && atEnd) return { kind: 'fail', message: `${topic}: ${state.reason}` };
  if (now > deadline) {
    return {
      kind: 'fail',
      message:
        `${topic}: ${state.kind === 'broken' ? state.reason : `no weights of run ${runId} v${version}`} after ${timeoutMs / 1000} s. ` +
        'Does the learner write weights to this topic (TRAJFLOW_WEIGHTS=topic), and is the version within the newest it keeps?',
    };
  }
  return { kind: 'wait', ms: Math.min(500, Math.max(0, deadline - now) + 1) };
}

/** True when every partition's last record at the time `ends` was taken (-1: empty) has been handled. */
export function readPast(ends: readonly (readonly [number, bigint])[], handled: ReadonlyMap<number, bigint>): boolean {
  return ends.every(([partition, last]) => last < 0n || (handled.get(partition) ?? -1n) >= last);
}
