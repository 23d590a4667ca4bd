// A transaction's messages as one or more produce requests. kafkajs sends one record batch per topic-partition
// per sendBatch, and a broker refuses a batch above the topic's max.message.bytes — 1,048,588 bytes by
// default on a Kafka cluster (trajflow's own broker allows 16 MiB). A lane's transaction carries whatever
// queued while its previous one was in flight (docs/results/processors.md#transaction-sizes), so one slow
// transaction would make the next one too big, fail, and fail again after every restart. Above
// `maxBytes` per topic the messages are split into several sendBatch calls of the same transaction.
import type { TopicMessages } from './transaction-protocol.js';

/** Bytes of a record beyond its key and value (length, attributes, deltas, varint sizes, headers count). */
const RECORD_OVERHEAD_BYTES = 32;

/** Well under the default max.message.bytes (1,048,588), leaving room for the batch header. */
export const MAX_REQUEST_TOPIC_BYTES = 900_000;

type Message = TopicMessages['messages'][number];

function sizeOf(message: Message): number {
  const key = message.key === null ? 0 : typeof message.key === 'string' ? Buffer.byteLength(message.key) : message.key.length;
  return key + (message.value?.length ?? 0) + RECORD_OVERHEAD_BYTES;
}

/**
 * Splits each topic's messages, in order, into slices of at most `maxBytes` (a single larger message makes a
 * slice of its own); request i holds slice i of every topic that has one. Sent in order, the requests keep
 * every partition's order. Nothing above the limit: one request.
 */
export function splitIntoRequests(topicMessages: readonly TopicMessages[], maxBytes = MAX_REQUEST_TOPIC_BYTES): { topic: string; messages: Message[] }[][] {
  const requests: { topic: string; messages: Message[] }[][] = [];
  for (const { topic, messages } of topicMessages) {
    const slices: Message[][] = [];
    let current: Message[] = [];
    let bytes = 0;
    for (const message of messages) {
      const size = sizeOf(message);
      if (current.length > 0 && bytes + size > maxBytes) {
        slices.push(current);
        current = [];
        bytes = 0;
      }
      current.push(message);
      bytes += size;
    }
    if (current.length > 0) slices.push(current);
    slices.forEach((slice, i) => (requests[i] ??= []).push({ topic, messages: slice }));
  }
  return requests;
}
