// What one recorded call's time went to, as the gateway measured it, and the Server-Timing header that carries
// it back on the answer: the upstream, the log's read barrier (and the share of it the call waited beyond the
// upstream), Kafka's acknowledgement of the step, and the whole call in the recorder.
export interface CallTiming {
  /** The upstream's answer. */
  readonly upstreamMs: number;
  /** From the call's arrival until the book had read the steps topic up to the watermarks fetched after it. */
  readonly barrierMs: number;
  /** The part of barrierMs until those watermarks came back (waiting behind a request in flight included). */
  readonly watermarksMs: number;
  /** What the call waited for the read barrier after the upstream had answered (the part not hidden by it). */
  readonly barrierWaitMs: number;
  /** Publishing the call's steps until Kafka acknowledged them. */
  readonly publishMs: number;
  /** The whole call in the recorder, from arrival to the acknowledgement. */
  readonly recordMs: number;
}

/** The Server-Timing metric name of each phase. */
export const SERVER_TIMING_NAMES: Readonly<Record<keyof CallTiming, string>> = {
  upstreamMs: 'upstream',
  barrierMs: 'barrier',
  watermarksMs: 'watermarks',
  barrierWaitMs: 'barrier-wait',
  publishMs: 'publish',
  recordMs: 'record',
};

/** The Server-Timing header value of a call's phases, in milliseconds to the microsecond. */
export function serverTiming(timing: CallTiming): string {
  return (Object.keys(SERVER_TIMING_NAMES) as (keyof CallTiming)[]).map((key) => `${SERVER_TIMING_NAMES[key]};dur=${timing[key].toFixed(3)}`).join(', ');
}

/** A call's phases read back from its Server-Timing header; null when a phase is missing. */
export function parseServerTiming(header: string | undefined): CallTiming | null {
  if (header === undefined) return null;
  const durations = new Map<string, number>();
  for (const metric of header.split(',')) {
    const [name, ...params] = metric.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([0-9.eE+-]+)\s*$/.exec(p)?.[1]).find((d) => d !== undefined);
    if (name !== undefined && dur !== undefined) durations.set(name.trim(), Number(dur));
  }
  const timing: Partial<Record<keyof CallTiming, number>> = {};
  for (const [key, name] of Object.entries(SERVER_TIMING_NAMES) as [keyof CallTiming, string][]) {
    const value = durations.get(name);
    if (value === undefined || !Number.isFinite(value)) return null;
    timing[key] = value;
  }
  return timing as CallTiming;
}
