// The detectors on Kafka: `<prefix>.learner.steps`, `<prefix>.rollout.stats` (and `<prefix>.trajectories`
// when template collapse or repetition is on) → detectCollapseFrom → `<prefix>.alerts`, as the consumer
// group `<prefix>.detectors`.
//
// Delivery: at least once. An input is acknowledged only after every alert it raised has been acknowledged
// by the broker (acks=all), so committed offsets never pass an input whose alerts are not written. Alert
// ids and times derive from the inputs (alert-event.ts): a re-processed input gives the same alert, and
// the copies collapse in ClickHouse by (run_id, alert_id).
//
// State on restart: detectors are windowed, so their state is rebuilt by replay. Before joining the group,
// every partition is replayed from its beginning up to the group's committed offset into the engine, with
// the alerts dropped — they were written before those offsets were committed. The group then continues
// from the committed offsets with warm detectors. After a rebalance kafkajs delivers uncommitted inputs
// again; inputs at or below the last offset fed to the engine are not fed twice, and are acknowledged once
// the alerts of their first delivery are written.
//
// Run one instance per topic prefix: a detector needs all of a run's events, and two members of the group
// would split the topics between them.
import { lastValueFrom, map, mergeMap, from, type Subscription } from 'rxjs';
import type { Kafka } from 'kafkajs';
import { topicName } from '../core/config.js';
import { retryRetriable } from '../streams/retry.js';
import { DecodeError, validateEvent, type AnyEvent, type CollapseAlertEvent, type EventCodec } from '../schemas/index.js';
import type { Backbone } from '../streams/backbone.js';
import { classifyDecodeError } from '../streams/event-consumer.js';
import { createReplay } from '../streams/replay.js';
import { TopicConsumer, type Envelope } from '../streams/topic-consumer.js';
import { buildDetectorsConfig, readsTrajectories, type DetectorsConfig } from './config.js';
import { detectCollapseFrom } from './detect-collapse.js';
import { CollapseEngine, type DetectorInput } from './engine.js';

export interface DetectorsOptions {
  /** Consumer group; default `<prefix>.detectors`, or `<prefix>.detectors.<runId>` with runId. */
  readonly consumerGroupId?: string;
  /** Watch one run only (events of other runs are acknowledged and ignored). */
  readonly runId?: string;
  /** Topic names (defaults: the config's prefix with learner.steps, rollout.stats, trajectories, alerts). */
  readonly topics?: Partial<{ learnerSteps: string; rolloutStats: string; trajectories: string; alerts: string }>;
  /** Rebuild the detectors' state from the committed part of the topics before consuming (default true). */
  readonly rebuild?: boolean;
  readonly maxInFlight?: number;
  readonly commitIntervalMs?: number;
  readonly sessionTimeoutMs?: number;
  /** Called for every alert once the broker has it. */
  readonly onAlert?: (alert: CollapseAlertEvent) => void;
}

export interface DetectorsStats {
  /** Inputs delivered by the group consumer (not counting the rebuild). */
  inputs: number;
  /** Inputs replayed into the detectors before consuming. */
  rebuilt: number;
  /** Deliveries skipped because the engine had already seen them (rebalance). */
  redelivered: number;
  alerts: number;
}

export interface DetectorsHandle {
  readonly consumer: TopicConsumer<AnyEvent>;
  readonly engine: CollapseEngine;
  readonly stats: DetectorsStats;
  readonly groupId: string;
  /** Resolves when the detectors stop (after close); rejects on a failure (exit and restart the process). */
  readonly done: Promise<void>;
  /** Stops consuming and commits what is written; alerts still held or in flight come again after a restart. */
  close(): Promise<void>;
}

/** Decodes any trajflow event and applies its semantic checks; DecodeError (dead-lettered) on bad input. */
export function anyEventDecoder(codec: EventCodec): (payload: Buffer | null) => AnyEvent {
  return (payload) => {
    if (payload === null || payload.length === 0) throw new DecodeError('truncated', 'empty payload: the message has no value (a tombstone?)');
    const decoded = codec.decodeAny(payload);
    const check = validateEvent(decoded.event, decoded.value);
    if (!check.ok) throw new DecodeError('invalid-value', `${decoded.event}.${check.field}: ${check.message}`);
    return decoded;
  };
}

/** The detector input of an event read from `source` ('topic/partition'), or null for events the detectors do not read (or of other runs). */
export function detectorInputOf(event: AnyEvent, source: string, runId?: string): DetectorInput | null {
  if (runId !== undefined && 'runId' in event.value && event.value.runId !== runId) return null;
  switch (event.event) {
    case 'learner_step':
      return { type: 'learner_step', event: event.value };
    case 'rollout_stats':
      return { type: 'rollout_stats', event: event.value };
    case 'trajectory':
      return { type: 'trajectory', event: event.value, source };
    default:
      return null;
  }
}

const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

/** 'topic/partition' for every partition of a topic. */
async function partitionsOf(kafka: Kafka, topic: string): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [metadata] = (await retryRetriable(() => admin.fetchTopicMetadata({ topics: [topic] }))).topics;
    return (metadata?.partitions ?? []).map((p) => partitionKey(topic, p.partitionId)).sort();
  } finally {
    await admin.disconnect();
  }
}

/** Per topic, partition → committed offset of the group (only partitions with a commit past their start). */
async function committedRanges(kafka: Kafka, groupId: string, topics: readonly string[]): Promise<Map<string, Record<number, bigint>>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ranges = new Map<string, Record<number, bigint>>();
    for (const { topic, partitions } of await retryRetriable(() => admin.fetchOffsets({ groupId, topics: [...topics] }))) {
      const lows = new Map((await retryRetriable(() => admin.fetchTopicOffsets(topic))).map((w) => [w.partition, BigInt(w.low)]));
      const ends: Record<number, bigint> = {};
      for (const { partition, offset } of partitions) {
        const committed = BigInt(offset);
        if (committed > (lows.get(partition) ?? 0n)) ends[partition] = committed;
      }
      if (Object.keys(ends).length > 0) ranges.set(topic, ends);
    }
    return ranges;
  } finally {
    await admin.disconnect();
  }
}

export async function startDetectors(backbone: Backbone, config: DetectorsConfig = buildDetectorsConfig(), options: DetectorsOptions = {}): Promise<DetectorsHandle> {
  const prefix = backbone.config.topicPrefix;
  const groupId = options.consumerGroupId ?? (options.runId === undefined ? `${prefix}.detectors` : `${prefix}.detectors.${options.runId}`);
  const topics = {
    learnerSteps: options.topics?.learnerSteps ?? topicName(backbone.config, 'learner.steps'),
    rolloutStats: options.topics?.rolloutStats ?? topicName(backbone.config, 'rollout.stats'),
    trajectories: options.topics?.trajectories ?? topicName(backbone.config, 'trajectories'),
    alerts: options.topics?.alerts ?? topicName(backbone.config, 'alerts'),
  };
  const inputTopics = [topics.learnerSteps, topics.rolloutStats, ...(readsTrajectories(config) ? [topics.trajectories] : [])];
  const decode = anyEventDecoder(backbone.codec);
  const engine = new CollapseEngine(config, { trajectorySources: readsTrajectories(config) ? await partitionsOf(backbone.kafka, topics.trajectories) : [] });
  const stats: DetectorsStats = { inputs: 0, rebuilt: 0, redelivered: 0, alerts: 0 };
  /** Highest offset fed to the engine, per partition. */
  const fed = new Map<string, bigint>();

  if (options.rebuild ?? true) {
    for (const [topic, ends] of await committedRanges(backbone.kafka, groupId, inputTopics)) {
      const replay = await createReplay(backbone.kafka, { topic, decode, classify: classifyDecodeError, from: 'earliest', to: { offsets: ends } });
      await lastValueFrom(
        replay.events$.pipe(
          map((envelope) => {
            const input = detectorInputOf(envelope.value, partitionKey(envelope.topic, envelope.partition), options.runId);
            if (input !== null) engine.observe(input); // alerts dropped: written before the offsets were committed
            stats.rebuilt++;
            fed.set(partitionKey(envelope.topic, envelope.partition), BigInt(envelope.offset));
          }),
        ),
        { defaultValue: undefined },
      );
    }
  }

  const consumer = new TopicConsumer<AnyEvent>(backbone.kafka, {
    topics: inputTopics,
    groupId,
    decode,
    classify: classifyDecodeError,
    deadLetters: backbone.deadLetters,
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.commitIntervalMs === undefined ? {} : { commitIntervalMs: options.commitIntervalMs }),
    ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
  });

  interface Item {
    readonly envelope: Envelope<AnyEvent>;
    readonly input: DetectorInput | null;
    /** For a redelivery: resolves when the first delivery's alerts are written. */
    readonly firstDelivery: Promise<void> | null;
  }
  /** Inputs fed to the engine whose alerts are not written yet, by topic/partition/offset. */
  const writing = new Map<string, { promise: Promise<void>; resolve: () => void }>();

  const intake = (envelope: Envelope<AnyEvent>): Item => {
    stats.inputs++;
    const partition = partitionKey(envelope.topic, envelope.partition);
    const offset = BigInt(envelope.offset);
    const key = `${partition}/${envelope.offset}`;
    const last = fed.get(partition);
    if (last !== undefined && offset <= last) {
      stats.redelivered++;
      return { envelope, input: null, firstDelivery: writing.get(key)?.promise ?? Promise.resolve() };
    }
    fed.set(partition, offset);
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    writing.set(key, { promise, resolve });
    return { envelope, input: detectorInputOf(envelope.value, partition, options.runId), firstDelivery: null };
  };

  const write = async (item: Item | null, alerts: readonly CollapseAlertEvent[]): Promise<void> => {
    if (item?.firstDelivery) await item.firstDelivery;
    await Promise.all(alerts.map((alert) => backbone.producer.send(topics.alerts, 'collapse_alert', alert, alert.runId)));
    stats.alerts += alerts.length;
    for (const alert of alerts) options.onAlert?.(alert);
    if (!item) return;
    const key = `${partitionKey(item.envelope.topic, item.envelope.partition)}/${item.envelope.offset}`;
    if (!item.firstDelivery) {
      writing.get(key)?.resolve();
      writing.delete(key);
    }
    item.envelope.ack();
  };

  let resolveDone!: () => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined);
  const subscription: Subscription = consumer.events$
    .pipe(
      map(intake),
      detectCollapseFrom(config, (item: Item) => item.input, { engine, flushOnComplete: false }),
      mergeMap(({ source, alerts }) => from(write(source, alerts))),
    )
    .subscribe({ error: (error) => rejectDone(error), complete: () => resolveDone() });

  let closing: Promise<void> | null = null;
  return {
    consumer,
    engine,
    stats,
    groupId,
    done,
    close: () => {
      // Unsubscribing first drops held alerts instead of writing them with a provisional attribution; the
      // consumer then commits what was acknowledged and leaves (the rest is delivered again after a restart).
      closing ??= (async () => {
        subscription.unsubscribe();
        await consumer.close({ drain: false });
        resolveDone();
      })();
      return closing;
    },
  };
}
