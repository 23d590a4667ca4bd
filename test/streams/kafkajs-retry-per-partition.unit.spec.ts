// Unit tier: the [retry-per-partition] patch of kafkajs' sendMessages (patches/kafkajs+2.2.4.patch,
// docs/design/kafka-client.md). A send whose second broker dies mid-request, its partition's leadership moving to
// the first broker: the shipped kafkajs kept answers per broker, so the moved partition was never sent (the send
// resolved, its messages lost) or a broker still answering was sent its messages again with the next sequence
// numbers (written twice). Both tests fail on the shipped sendMessages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

async function sendWithLeaderLoss(firstAnswersLate: boolean): Promise<{ produced: string[]; responses: number }> {
  const createSendMessages = require('kafkajs/src/producer/sendMessages.js') as (deps: Record<string, unknown>) => (args: Record<string, unknown>) => Promise<unknown[]>;
  const createRetry = require('kafkajs/src/retry') as (options: Record<string, unknown>) => unknown;
  const { KafkaJSConnectionError } = require('kafkajs/src/errors') as { KafkaJSConnectionError: new (message: string) => Error };
  const produced: string[] = [];
  let leaders: Record<number, number> = { 0: 1, 1: 2 };
  const broker = (nodeId: number) => ({
    nodeId,
    produce: async ({ topicData }: { topicData: { topic: string; partitions: { partition: number; firstSequence: number; messages: { value: string }[] }[] }[] }) => {
      if (nodeId === 2) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new KafkaJSConnectionError('Connection error: read ECONNRESET');
      }
      if (firstAnswersLate) await new Promise((resolve) => setTimeout(resolve, 50));
      for (const t of topicData) for (const p of t.partitions) produced.push(`${t.topic}/${p.partition}#${p.firstSequence}=${p.messages.map((m) => m.value).join(',')}`);
      return { topics: topicData.map((t) => ({ topicName: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })) })) };
    },
  });
  const brokers = new Map([1, 2].map((id) => [id, broker(id)]));
  const cluster = {
    refreshMetadataIfNecessary: async () => undefined,
    // The killed broker's partition moves to the survivor, as the controller elects a new leader.
    refreshMetadata: async () => void (leaders = { 0: 1, 1: 1 }),
    addMultipleTargetTopics: async () => undefined,
    isConnected: () => true,
    removeBroker: () => undefined,
    findTopicPartitionMetadata: () => Object.keys(leaders).map((p) => ({ partitionId: Number(p), leader: leaders[Number(p)] })),
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      const byLeader: Record<number, number[]> = {};
      for (const p of partitions) (byLeader[leaders[Number(p)]!] ??= []).push(Number(p));
      return byLeader;
    },
    findBroker: async ({ nodeId }: { nodeId: number }) => brokers.get(Number(nodeId)),
  };
  const sequences = new Map<string, number>();
  const locks = new Map<number, Promise<void>>();
  const releases = new Map<number, () => void>();
  const eosManager = {
    isTransactional: () => true,
    addPartitionsToTransaction: async () => undefined,
    // kafkajs' lock: one request at a time per broker once the producer id is known.
    acquireBrokerLock: async (b: { nodeId: number }) => {
      while (locks.has(b.nodeId)) await locks.get(b.nodeId);
      locks.set(b.nodeId, new Promise<void>((resolve) => releases.set(b.nodeId, resolve)));
    },
    releaseBrokerLock: (b: { nodeId: number }) => {
      locks.delete(b.nodeId);
      releases.get(b.nodeId)!();
    },
    getSequence: (topic: string, partition: number) => sequences.get(`${topic}/${partition}`) ?? 0,
    updateSequence: (topic: string, partition: number, n: number) => void sequences.set(`${topic}/${partition}`, (sequences.get(`${topic}/${partition}`) ?? 0) + n),
    getTransactionalId: () => 'tx',
    getProducerId: () => '1',
    getProducerEpoch: () => 0,
  };
  const send = createSendMessages({
    logger: { debug: () => undefined, error: () => undefined },
    cluster,
    eosManager,
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    retrier: createRetry({ initialRetryTime: 10, retries: 5 }),
  });
  const responses = await send({
    acks: -1,
    topicMessages: [
      {
        topic: 't',
        messages: [
          { partition: 0, value: 'a' },
          { partition: 1, value: 'b' },
        ],
      },
    ],
  });
  return { produced, responses: responses.length };
}

test('a partition whose leader died is sent to its new leader even when that broker had already answered for another partition', async () => {
  const { produced, responses } = await sendWithLeaderLoss(false);
  assert.deepEqual(produced.sort(), ['t/0#0=a', 't/1#0=b']);
  assert.equal(responses, 2);
});

test('a broker still answering when another fails is not sent its messages again (they would be written twice)', async () => {
  const { produced, responses } = await sendWithLeaderLoss(true);
  assert.deepEqual(produced.sort(), ['t/0#0=a', 't/1#0=b']);
  assert.equal(responses, 2);
});
