// The figures of `bench sink` (pure): a round's from its three sides, and the medians over the rounds.
import { INSERTS_IN_FLIGHT, WARM_UP_SHARE } from './sink-rounds.js';
import type { SideRequest, SideResult } from './sink-side.js';
import { median, medianOrNull } from './median.js';

export interface SinkBenchRound {
  /** Steady rates: from the first insert confirmed past WARM_UP_SHARE of the rows to the last (sink-rounds.ts). */
  readonly rawRowsPerSec: number;
  readonly sinkRowsPerSec: number;
  /** Over the whole side, warm-up included (the sink's clock from the group join). */
  readonly rawWholeRowsPerSec: number;
  readonly sinkWholeRowsPerSec: number;
  /** A bare kafkajs consumer reading the same events (no decode, no insert). */
  readonly readEventsPerSec: number;
  readonly ratio: number;
  /** startSink → consumer group joined (not in the sink's clock). */
  readonly joinMs: number;
  /** The sink's mean rows per insert (the raw side sends batchRows each). */
  readonly sinkRowsPerInsert: number;
  /** Event-loop utilisation of each side's main thread over its clock window (1 = never waited). */
  readonly rawEventLoopUtilization: number;
  readonly sinkEventLoopUtilization: number;
  /** CPU per row of the side's own process (clock window), µs. */
  readonly rawCpuMicrosPerRow: number;
  readonly sinkCpuMicrosPerRow: number;
  /** CPU per event of the bare kafkajs reader (group join to last event), µs: what kafkajs' fetch costs alone. */
  readonly readCpuMicrosPerEvent: number;
  /** ClickHouse's CPU per row while each side ran (its whole process lifetime, merges included), µs; null when trajflow did not start ClickHouse. */
  readonly clickHouseMicrosPerRowRaw: number | null;
  readonly clickHouseMicrosPerRowSink: number | null;
}

export interface SinkBenchResult {
  readonly events: number;
  readonly format: string;
  readonly batchRows: number;
  /** Whether the sink transcoded steps on its worker thread. */
  readonly transcodeWorker: boolean;
  readonly insertsInFlight: number;
  /** Medians over the rounds. */
  readonly sinkRowsPerSec: number;
  readonly rawRowsPerSec: number;
  readonly readEventsPerSec: number;
  readonly ratio: number;
  /** The same over whole sides (medians). */
  readonly sinkWholeRowsPerSec: number;
  readonly rawWholeRowsPerSec: number;
  readonly wholeRatio: number;
  readonly warmUpShare: number;
  /** Medians of the rounds' CPU figures (see SinkBenchRound). */
  readonly rawCpuMicrosPerRow: number;
  readonly sinkCpuMicrosPerRow: number;
  readonly readCpuMicrosPerEvent: number;
  readonly clickHouseMicrosPerRowRaw: number | null;
  readonly clickHouseMicrosPerRowSink: number | null;
  readonly rounds: readonly SinkBenchRound[];
}

export type Side = SideRequest['side'];

/** The order of a round's sides: alternated round by round, so neither always runs first. */
export function sideOrder(round: number): readonly Side[] {
  return round % 2 === 0 ? ['raw', 'read', 'sink'] : ['sink', 'read', 'raw'];
}

/** ClickHouse's CPU per row over a side, µs, from its CPU ms before and after (null when either was not read). */
export function clickHouseMicrosPerRow(beforeMs: number | null, afterMs: number | null, rows: number): number | null {
  return beforeMs === null || afterMs === null ? null : ((afterMs - beforeMs) * 1000) / rows;
}

/** A round's figures from its three sides and ClickHouse's CPU while the raw and the sink side ran. */
export function roundFigures(sides: Readonly<Record<Side, SideResult>>, clickHouseMicros: Partial<Record<Side, number | null>>): SinkBenchRound {
  const { raw, read, sink } = sides;
  return {
    rawRowsPerSec: raw.steady,
    sinkRowsPerSec: sink.steady,
    rawWholeRowsPerSec: raw.whole,
    sinkWholeRowsPerSec: sink.whole,
    readEventsPerSec: read.whole,
    ratio: sink.steady / raw.steady,
    joinMs: sink.joinMs,
    sinkRowsPerInsert: sink.rowsPerInsert,
    rawEventLoopUtilization: raw.eventLoopUtilization,
    sinkEventLoopUtilization: sink.eventLoopUtilization,
    rawCpuMicrosPerRow: raw.cpuMicrosPerRow,
    sinkCpuMicrosPerRow: sink.cpuMicrosPerRow,
    readCpuMicrosPerEvent: read.cpuMicrosPerRow,
    clickHouseMicrosPerRowRaw: clickHouseMicros.raw ?? null,
    clickHouseMicrosPerRowSink: clickHouseMicros.sink ?? null,
  };
}

/** The result: the run's settings and the medians over its rounds. */
export function sinkSummary(
  run: { readonly events: number; readonly format: string; readonly batchRows: number; readonly transcodeWorker: boolean },
  results: readonly SinkBenchRound[],
): SinkBenchResult {
  const of = (pick: (r: SinkBenchRound) => number) => median(results.map(pick));
  return {
    events: run.events,
    format: run.format,
    batchRows: run.batchRows,
    transcodeWorker: run.transcodeWorker,
    insertsInFlight: INSERTS_IN_FLIGHT,
    sinkRowsPerSec: of((r) => r.sinkRowsPerSec),
    rawRowsPerSec: of((r) => r.rawRowsPerSec),
    readEventsPerSec: of((r) => r.readEventsPerSec),
    ratio: of((r) => r.ratio),
    sinkWholeRowsPerSec: of((r) => r.sinkWholeRowsPerSec),
    rawWholeRowsPerSec: of((r) => r.rawWholeRowsPerSec),
    wholeRatio: of((r) => r.sinkWholeRowsPerSec / r.rawWholeRowsPerSec),
    warmUpShare: WARM_UP_SHARE,
    rawCpuMicrosPerRow: of((r) => r.rawCpuMicrosPerRow),
    sinkCpuMicrosPerRow: of((r) => r.sinkCpuMicrosPerRow),
    readCpuMicrosPerEvent: of((r) => r.readCpuMicrosPerEvent),
    clickHouseMicrosPerRowRaw: medianOrNull(results.map((r) => r.clickHouseMicrosPerRowRaw)),
    clickHouseMicrosPerRowSink: medianOrNull(results.map((r) => r.clickHouseMicrosPerRowSink)),
    rounds: results,
  };
}
