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
//
// This file is the shell: the consumer, the producer, the rebuild's replays. The decisions are pure parts
// beside it: start-config.ts (group and topics), detector-input.ts (which events feed the engine, as what),
// deliveries.ts (what is fed, and when a delivery may be acknowledged), rebuild.ts (what is replayed),
// engine.ts and detect-collapse.ts (which metrics feed which detector; when alerts fire and go out).
import { from, map, mergeMap, type Subscription } from 'rxjs';
import type { AnyEvent, CollapseAlertEvent } from '../schemas/index.js';
import type { Backbone } from '../streams/backbone.js';
import { classifyDecodeError } from '../streams/event-consumer.js';
import { TopicConsumer, type Envelope } from '../streams/topic-consumer.js';
import { buildDetectorsConfig, readsTrajectories, type DetectorsConfig } from './config.js';
import { detectCollapseFrom, type Detection } from './detect-collapse.js';
import { Deliveries, type Delivery } from './deliveries.js';
import { anyEventDecoder } from './detector-input.js';
import { CollapseEngine } from './engine.js';
import { partitionsOf, rebuildEngine } from './rebuild.js';
import { buildDetectorsStartConfig, type DetectorsOptions, type DetectorsTopics } from './start-config.js';

export { anyEventDecoder, detectorInputOf } from './detector-input.js';
export type { DetectorsOptions } from './start-config.js';

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

export async function startDetectors(backbone: Backbone, config: DetectorsConfig = buildDetectorsConfig(), options: DetectorsOptions = {}): Promise<DetectorsHandle> {
  const { groupId, topics, inputTopics } = buildDetectorsStartConfig(backbone.config, config, options);
  const decode = anyEventDecoder(backbone.codec);
  const engine = new CollapseEngine(config, { trajectorySources: readsTrajectories(config) ? await partitionsOf(backbone.kafka, topics.trajectories) : [] });
  const stats: DetectorsStats = { inputs: 0, rebuilt: 0, redelivered: 0, alerts: 0 };
  const deliveries = new Deliveries(options.runId);
  if (options.rebuild ?? true) stats.rebuilt += await rebuildEngine(backbone.kafka, { groupId, topics: inputTopics, decode, engine, deliveries });

  const consumer = inputConsumer(backbone, inputTopics, groupId, decode, options);
  const receive = (envelope: Envelope<AnyEvent>): Delivery => {
    stats.inputs++;
    const delivery = deliveries.received(envelope);
    if (delivery.firstDelivery !== null) stats.redelivered++;
    return delivery;
  };
  const write = alertWriter(backbone, topics, deliveries, stats, (alert) => options.onAlert?.(alert));

  let resolveDone!: () => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined);
  const subscription: Subscription = consumer.events$
    .pipe(
      map(receive),
      detectCollapseFrom(config, (delivery: Delivery) => delivery.input, { engine, flushOnComplete: false }),
      mergeMap((detection) => from(write(detection))),
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

/** The group consumer of the input topics; undecodable inputs are dead-lettered. */
function inputConsumer(
  backbone: Backbone,
  topics: readonly string[],
  groupId: string,
  decode: (payload: Buffer | null) => AnyEvent,
  options: DetectorsOptions,
): TopicConsumer<AnyEvent> {
  return new TopicConsumer<AnyEvent>(backbone.kafka, {
    topics,
    groupId,
    decode,
    classify: classifyDecodeError,
    deadLetters: backbone.deadLetters,
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.commitIntervalMs === undefined ? {} : { commitIntervalMs: options.commitIntervalMs }),
    ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
  });
}

/**
 * Writes a detection's alerts (acks=all), then acknowledges its input — a redelivery only once its first
 * delivery's alerts are written — so committed offsets never pass an input whose alerts are not written.
 */
function alertWriter(
  backbone: Backbone,
  topics: DetectorsTopics,
  deliveries: Deliveries,
  stats: DetectorsStats,
  onAlert: (alert: CollapseAlertEvent) => void,
): (detection: Detection<Delivery>) => Promise<void> {
  return async ({ source, alerts }) => {
    if (source?.firstDelivery) await source.firstDelivery;
    await Promise.all(alerts.map((alert) => backbone.producer.send(topics.alerts, 'collapse_alert', alert, alert.runId)));
    stats.alerts += alerts.length;
    for (const alert of alerts) onAlert(alert);
    if (!source) return;
    deliveries.written(source);
    source.envelope.ack();
  };
}
