// The processors' Kafka I/O without their processing: the floor under their throughput on this machine.
//
// The same steps as the processors' throughput window are read with a bare kafkajs consumer (no decode),
// and their bytes are written back exactly once, as the processors write theirs: per input partition one
// transaction in flight through TransactionClient (the processors' own worker thread), the consumer
// offsets inside it, and what arrived meanwhile in the next. Every 4 consecutive steps of a partition
// become one message written to two topics: one trajectory and one sample per 4-step episode, ≈ 2 KB of
// output per 1 KB step, as the processors write (docs/results/processors.md).
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
import { batchDelivered, copyMessages, emptyCopy, writeCommitted, type CopyWrite } from './exactly-once-copy-state.js';

/** Consecutive steps of a partition written as one message (the bench's episodes have 4 steps). */
const STEPS_PER_MESSAGE = 4;
/** The steps topic's partitions, as ensureTopics creates them: one transactional producer each. */
const PARTITIONS = Array.from({ length: topicSpecs.find((spec) => spec.name === 'env.steps')!.partitions }, (_, p) => p);

/** Steps/s and the CPU per step (this process's, the broker's), over `stepCount` steps already on `local`'s steps topic. */
export async function exactlyOnceCopyThroughput(local: Backbone, stepCount: number): Promise<{ stepsPerSecond: number; cpu: CpuPerItem }> {
  const steps = topicName(local.config, 'env.steps');
  const groupId = `bench-copy-${randomUUID()}`;
  const client = new TransactionClient({ kafka: local.config.kafka, clientId: 'trajflow-bench-copy', transactionalIdPrefix: `${groupId}.${steps}`, generation: 0 });
  const consumer = local.kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  const outputs = [topicName(local.config, 'trajectories'), topicName(local.config, 'samples')];
  const writer = copyWriter(client, { groupId, steps, outputs, stepCount });
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
        writer.delivered(
          batch.partition,
          batch.messages.map((message) => message.value!),
          batch.messages[batch.messages.length - 1]!.offset,
        );
      },
    });
    await writer.finished;
    const failure = writer.failure();
    if (failure) throw failure;
    const seconds = Number(process.hrtime.bigint() - start!) / 1e9;
    meter.stop();
    return { stepsPerSecond: stepCount / seconds, cpu: meter.perItem(stepCount) };
  } finally {
    await consumer.disconnect();
    await client.close();
  }
}

/**
 * Writes what is delivered through `client`, per input partition one transaction in flight with the consumer offsets
 * inside it (exactly-once-copy-state.ts decides what each transaction carries), until `stepCount`
 * steps are written or a transaction failed.
 */
function copyWriter(client: TransactionClient, copy: { groupId: string; steps: string; outputs: readonly string[]; stepCount: number }) {
  let state = emptyCopy<Buffer>();
  let failure: Error | null = null;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const write = (next: CopyWrite<Buffer> | null): void => {
    if (next === null) return;
    const messages = copyMessages(next.values, STEPS_PER_MESSAGE);
    const topicMessages: TopicMessages[] = copy.outputs.map((topic) => ({ topic, messages }));
    const offsets = {
      consumerGroupId: copy.groupId,
      topics: [{ topic: copy.steps, partitions: [{ partition: next.partition, offset: (BigInt(next.lastOffset) + 1n).toString() }] }],
    };
    client
      .write(next.partition, 0, topicMessages, offsets)
      .then(({ outcome }) => {
        if (outcome !== 'committed') throw new Error(`bench: an exactly-once copy transaction ended ${outcome}`);
        const step = writeCommitted(state, next.partition, next.values.length, copy.stepCount);
        state = step.state;
        if (step.finished) finish();
        else write(step.write);
      })
      .catch((error: Error) => {
        failure = error;
        finish();
      });
  };
  return {
    delivered(partition: number, values: readonly Buffer[], lastOffset: string): void {
      const step = batchDelivered(state, partition, values, lastOffset);
      state = step.state;
      write(step.write);
    },
    /** Settles once every step is written or a transaction failed. */
    finished,
    /** The first failed transaction's error, if one failed. */
    failure: (): Error | null => failure,
  };
}
