// Backbone throughput, side by side in one run on one machine:
//  - raw: kafkajs alone, produce → consume of opaque messages the size of an encoded step event
//    (the ceiling: no encoding, no decoding, no Observable, commits left to kafkajs);
//  - trajflow: encode → EventProducer → TopicConsumer Observable → decode + validate → ack (commits).
// Rounds alternate raw and trajflow so that a noisy neighbour hurts both alike; medians are reported.
import { randomBytes, randomUUID } from 'node:crypto';
import { Partitioners, type Kafka } from 'kafkajs';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { makeStep } from './load/events.js';
import { createEventConsumer, type Backbone } from '../streams/index.js';
import type { CpuMeter } from './server-cpu.js';

export interface ThroughputRound {
  readonly raw: number;
  readonly trajflow: number;
}

const PARTITIONS = 4;

// Topics are deleted only after the run (deleteBenchTopics): a kafkajs producer that once wrote to a
// topic keeps asking for its metadata, and a deleted topic makes every later send retry forever.
const createdTopics: string[] = [];

async function withTopic<T>(kafka: Kafka, body: (topic: string) => Promise<T>): Promise<T> {
  const topic = `bench.backbone.${randomUUID()}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
    createdTopics.push(topic);
  } finally {
    await admin.disconnect();
  }
  return body(topic);
}

/** Deletes the topics this run created; call after every producer that wrote to them is closed. */
export async function deleteBenchTopics(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics: createdTopics.splice(0) });
  } finally {
    await admin.disconnect();
  }
}

/**
 * kafkajs alone: N messages of `bytes` bytes, keyed over 64 groups; events/s from first send to last receipt.
 * `meter`, when given, is started and stopped with that clock (the CPU of the window, not of the set-up).
 */
export async function rawThroughput(kafka: Kafka, events: number, bytes: number, meter?: CpuMeter): Promise<number> {
  return withTopic(kafka, async (topic) => {
    const consumer = kafka.consumer({ groupId: `bench-raw-${randomUUID()}`, maxWaitTimeInMs: 200 });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await Promise.all([consumer.connect(), producer.connect()]);
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      let received = 0;
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
      await consumer.run({
        eachBatch: async ({ batch }) => {
          received += batch.messages.length;
          if (received >= events) done();
        },
      });
      await joined;
      const payloads = Array.from({ length: 256 }, () => randomBytes(bytes));
      meter?.start();
      const start = process.hrtime.bigint();
      for (let sent = 0; sent < events; ) {
        const n = Math.min(5000, events - sent);
        const messages = Array.from({ length: n }, (_, i) => ({ key: `group-${(sent + i) % 64}`, value: payloads[(sent + i) & 255]! }));
        await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
        sent += n;
      }
      await all;
      const rate = (events * 1e9) / Number(process.hrtime.bigint() - start);
      meter?.stop();
      return rate;
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
    }
  });
}

/** trajflow: N step events encoded, produced, consumed as an Observable, decoded, validated and acked. */
export async function trajflowThroughput(backbone: Backbone, events: number): Promise<number> {
  const steps = Array.from({ length: 1024 }, (_, i) => makeStep({ groupId: `group-${i % 64}` }, i));
  return withTopic(backbone.kafka, async (topic) => {
    const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
      topic,
      groupId: `bench-trajflow-${randomUUID()}`,
      deadLetters: backbone.deadLetters,
    });
    let received = 0;
    const all = firstValueFrom(
      consumer.events$.pipe(
        filter((envelope) => {
          envelope.ack();
          return ++received >= events;
        }),
      ),
    );
    // Wait until the consumer has joined its group, so both measurements start from the same point.
    while (consumer.stats.rebalances === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const start = process.hrtime.bigint();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < events; i++) {
      const step = steps[i & 1023]!;
      sends.push(backbone.producer.send(topic, 'step', step, step.groupId));
      // send() applies backpressure once its queue is full; yield so the flush loop can run.
      if ((i & 1023) === 1023) await Promise.race([sends[sends.length - 1], new Promise((resolve) => setImmediate(resolve))]);
    }
    await Promise.all(sends);
    await all;
    const rate = (events * 1e9) / Number(process.hrtime.bigint() - start);
    await consumer.close();
    return rate;
  });
}

export async function measureBackbone(
  backbone: Backbone,
  options: { events: number; rounds: number; eventBytes: number; progress?: (line: string) => void },
): Promise<ThroughputRound[]> {
  const { progress = () => undefined } = options;
  const rounds: ThroughputRound[] = [];
  // One small warm-up of each, so JIT and connection set-up do not land in the first round.
  progress('warm-up');
  await rawThroughput(backbone.kafka, 2000, options.eventBytes);
  await trajflowThroughput(backbone, 2000);
  for (let r = 0; r < options.rounds; r++) {
    progress(`round ${r + 1}/${options.rounds}: raw kafkajs`);
    const raw = await rawThroughput(backbone.kafka, options.events, options.eventBytes);
    progress(`round ${r + 1}/${options.rounds}: trajflow`);
    const trajflow = await trajflowThroughput(backbone, options.events);
    rounds.push({ raw, trajflow });
  }
  return rounds;
}
