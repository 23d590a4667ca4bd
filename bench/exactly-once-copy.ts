// The processors' Kafka I/O without their processing: the floor under their throughput on this machine.
//
// The same steps as the processors' throughput window are read with a bare kafkajs consumer (no decode),
// and their bytes are written back exactly once, as the processors write theirs: per input partition one
// transaction in flight through TransactionClient (the processors' own worker thread), the consumer
// offsets inside it, and what arrived meanwhile in the next. Every 4 consecutive steps of a partition
// become one message written to two topics: one trajectory and one sample per 4-step episode, ≈ 2 KB of
// output per 1 KB step, as the processors write (their output measured 1.9 KB per step).
//
// Why it is reported: the raw ceiling is a non-transactional produce→consume of one copy of the bytes. The
// processors move three copies (one in, two out) under transactions; this measures what that costs with
// no processing at all, so the gap between it and the processors is the processing.
import { randomUUID } from 'node:crypto';
import { topicName } from '../core/config.js';
import { topicSpecs } from '../infra/topics.js';
import { TransactionClient } from '../processors/exactly-once/transaction-client.js';
import type { TopicMessages } from '../processors/exactly-once/transaction-protocol.js';
import type { Backbone } from '../streams/index.js';
import { CpuMeter, type CpuPerItem } from './server-cpu.js';

/** Consecutive steps of a partition written as one message (the bench's episodes have 4 steps). */
const STEPS_PER_MESSAGE = 4;
/** The steps topic's partitions, as ensureTopics creates them: one transactional producer each. */
const PARTITIONS = Array.from({ length: topicSpecs.find((spec) => spec.name === 'env.steps')!.partitions }, (_, p) => p);

interface Pending {
  readonly values: Buffer[];
  lastOffset: string;
}

/** Steps/s and the CPU per step (this process's, the broker's), over `stepCount` steps already on `local`'s steps topic. */
export async function exactlyOnceCopyThroughput(local: Backbone, stepCount: number): Promise<{ stepsPerSecond: number; cpu: CpuPerItem }> {
  const steps = topicName(local.config, 'env.steps');
  const outputs = [topicName(local.config, 'trajectories'), topicName(local.config, 'samples')];
  const groupId = `bench-copy-${randomUUID()}`;
  const client = new TransactionClient({ kafka: local.config.kafka, clientId: 'trajflow-bench-copy', transactionalIdPrefix: `${groupId}.${steps}`, generation: 0 });
  const consumer = local.kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  const pending = new Map<number, Pending>();
  const inFlight = new Set<number>();
  let written = 0;
  let failure: Error | null = null;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  const write = (partition: number): void => {
    const batch = pending.get(partition);
    if (inFlight.has(partition) || batch === undefined) return;
    pending.delete(partition);
    inFlight.add(partition);
    const messages: { key: null; value: Buffer }[] = [];
    for (let i = 0; i < batch.values.length; i += STEPS_PER_MESSAGE) messages.push({ key: null, value: Buffer.concat(batch.values.slice(i, i + STEPS_PER_MESSAGE)) });
    const topicMessages: TopicMessages[] = outputs.map((topic) => ({ topic, messages }));
    const offsets = { consumerGroupId: groupId, topics: [{ topic: steps, partitions: [{ partition, offset: (BigInt(batch.lastOffset) + 1n).toString() }] }] };
    client
      .write(partition, 0, topicMessages, offsets)
      .then(({ outcome }) => {
        if (outcome !== 'committed') throw new Error(`bench: an exactly-once copy transaction ended ${outcome}`);
        inFlight.delete(partition);
        written += batch.values.length;
        if (written >= stepCount) finish();
        else write(partition);
      })
      .catch((error: Error) => {
        failure = error;
        finish();
      });
  };

  try {
    await client.fence(PARTITIONS);
    await consumer.connect();
    await consumer.subscribe({ topics: [steps], fromBeginning: true });
    let start: bigint | null = null;
    const meter = new CpuMeter(local.config);
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        // The clock starts at the first step delivered, as the processors' does.
        if (start === null) {
          start = process.hrtime.bigint();
          meter.start();
        }
        if (batch.messages.length === 0) return;
        const queued = pending.get(batch.partition) ?? { values: [], lastOffset: '' };
        for (const message of batch.messages) queued.values.push(message.value!);
        queued.lastOffset = batch.messages[batch.messages.length - 1]!.offset;
        pending.set(batch.partition, queued);
        write(batch.partition);
      },
    });
    await finished;
    if (failure) throw failure;
    const seconds = Number(process.hrtime.bigint() - start!) / 1e9;
    meter.stop();
    return { stepsPerSecond: stepCount / seconds, cpu: meter.perItem(stepCount) };
  } finally {
    await consumer.disconnect();
    await client.close();
  }
}
