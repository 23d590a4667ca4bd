// The three sides `bench sink` compares, each timed on its own (bench/sink-side.ts runs one per process):
//  - raw: the rows the sink writes, encoded and inserted exactly as the sink does (inserter.ts: RowBinary,
//    batchRows per request, INSERTS_IN_FLIGHT requests at a time); clock from the first encode to the last answer;
//  - sink: the step events already on the steps topic → `startSink` with the same batch size and in-flight bound
//    under a new consumer group; clock from the group joined to the last event stored and acked;
//  - read: the same topic read by a bare kafkajs consumer (the sink consumer's fetch settings, bytes counted and
//    dropped) — what any kafkajs consumer in one process can read here.
import { randomUUID } from 'node:crypto';
import { performance as nodePerformance } from 'node:perf_hooks';
import { topicName, type TrajflowConfig } from '../core/config.js';
import { Inserter } from '../storage/sink/inserter.js';
import { eventRows, type Row } from '../storage/sink/rows.js';
import { startSink } from '../storage/sink/sink.js';
import { eventDecoder, type Backbone } from '../streams/index.js';
import { EventCodec, SchemaRegistry } from '../schemas/index.js';
import { makeStep } from './load/events.js';

export const INSERTS_IN_FLIGHT = 2;

/** The bench's step events (the parent publishes the same ones). */
export function benchSteps(events: number) {
  return Array.from({ length: events }, (_, i) => makeStep({ eventId: `bench-${i}`, groupId: `g${i % 64}`, stepIndex: i }, i));
}

/** The rows the sink writes for the bench's steps: decoded from their Avro bytes (Avro floats are float32), as the sink sees them. */
export function benchRows(events: number): Row[] {
  const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
  const decode = eventDecoder(codec, 'step');
  return benchSteps(events).flatMap((step, i) => eventRows('step', decode(codec.encode('step', step)), { topic: 'raw', partition: 0, offset: String(i) }).map((r) => r.row));
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

/** The share of the rows whose time counts as warm-up (JIT, the first fetch and insert) in `steady`. */
export const WARM_UP_SHARE = 0.2;

/** A side's rates: over the whole run, and `steady` from the first confirmed insert past WARM_UP_SHARE of the rows. */
export interface SideRates {
  readonly whole: number;
  readonly steady: number;
  /** This process's CPU time (user + system) from the clock's start to the last row stored, per row, in µs. */
  readonly cpuMicrosPerRow: number;
  /** The main thread's event-loop utilisation over the same window: near 1 means its CPU bounds the rate, lower means it waited. */
  readonly eventLoopUtilization: number;
}

/** Times rows confirmed stored: call `stored(n)` with the running count, then `rates()` once all are. */
class StoreClock {
  private readonly started = performance.now();
  private readonly cpuAtStart = process.cpuUsage();
  private readonly eluAtStart = nodePerformance.eventLoopUtilization();
  private warmAt = 0;
  private warmRows = -1;

  constructor(private readonly total: number) {}

  stored(rows: number): void {
    if (this.warmRows < 0 && rows >= WARM_UP_SHARE * this.total && rows < this.total) {
      this.warmAt = performance.now();
      this.warmRows = rows;
    }
  }

  rates(): SideRates {
    const now = performance.now();
    const whole = this.total / ((now - this.started) / 1000);
    const cpu = process.cpuUsage(this.cpuAtStart);
    return {
      whole,
      steady: this.warmRows < 0 ? whole : (this.total - this.warmRows) / ((now - this.warmAt) / 1000),
      cpuMicrosPerRow: (cpu.user + cpu.system) / this.total,
      eventLoopUtilization: nodePerformance.eventLoopUtilization(this.eluAtStart).utilization,
    };
  }
}

/** The rows in `batchRows` requests, `insertsInFlight` at a time, as the sink sends them; rows/s. */
export async function rawRound(config: TrajflowConfig, rows: readonly Row[], batchRows: number): Promise<SideRates> {
  const inserter = new Inserter(config.clickhouse.url, config.clickhouse.database, 60_000, new AbortController().signal, undefined, config.clickhouse.credentials);
  try {
    await inserter.encode('steps', rows.slice(0, 1)); // column types asked before the clock (the sink asks once, at its first batch)
    const clock = new StoreClock(rows.length);
    let next = 0;
    let inserted = 0;
    const worker = async () => {
      while (next < rows.length) {
        const batch = rows.slice(next, (next += batchRows));
        await inserter.insert('steps', await inserter.encode('steps', batch));
        clock.stored((inserted += batch.length));
      }
    };
    await Promise.all(Array.from({ length: INSERTS_IN_FLIGHT }, worker));
    return clock.rates();
  } finally {
    inserter.close();
  }
}

export async function sinkRound(
  backbone: Backbone,
  config: TrajflowConfig,
  events: number,
  batchRows: number,
  transcodeWorker = false,
): Promise<SideRates & { joinMs: number; rowsPerInsert: number }> {
  const created = performance.now();
  const sink = await startSink(
    { ...backbone, config },
    {
      groupId: `bench-sink-${randomUUID()}`,
      events: ['step'],
      batchRows,
      insertsInFlight: INSERTS_IN_FLIGHT,
      transcodeWorker,
      clickhouse: config.clickhouse,
    },
  );
  try {
    while (sink.consumer.stats.rebalances === 0) await tick();
    const joined = performance.now();
    const clock = new StoreClock(events);
    while (sink.stats.stored < events) {
      await tick();
      clock.stored(sink.stats.stored);
    }
    // Inserts are cut at batchRows or flushIntervalMs after their first row, whichever comes first.
    return { ...clock.rates(), joinMs: joined - created, rowsPerInsert: sink.stats.stored / Math.max(1, sink.stats.inserts) };
  } finally {
    await sink.close({ drain: false });
  }
}

/** A bare kafkajs consumer (the sink consumer's fetch settings) reading `events` messages: events/s from the join. */
export async function readRound(backbone: Backbone, config: TrajflowConfig, events: number): Promise<{ perSecond: number; cpuMicrosPerEvent: number }> {
  const consumer = backbone.kafka.consumer({ groupId: `bench-read-${randomUUID()}`, maxWaitTimeInMs: 200, allowAutoTopicCreation: false });
  let joined = 0;
  let cpuAtJoin = process.cpuUsage();
  let read = 0;
  let bytes = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = performance.now();
    cpuAtJoin = process.cpuUsage();
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topicName(config, 'env.steps')], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) bytes += message.value?.length ?? 0;
        read += batch.messages.length;
      },
    });
    while (read < events) await tick();
    if (bytes === 0) throw new Error('read no bytes');
    const cpu = process.cpuUsage(cpuAtJoin);
    return { perSecond: events / ((performance.now() - joined) / 1000), cpuMicrosPerEvent: (cpu.user + cpu.system) / events };
  } finally {
    await consumer.disconnect();
  }
}
