// Where a group's steps belong: the partition the Java client and kafkajs pick for a message keyed by its group
// id — murmur2 of the key's UTF-8 bytes, made positive, modulo the partitions (Kafka's
// org.apache.kafka.common.utils.Utils.murmur2 and toPositive; kafkajs' DefaultPartitioner). librdkafka's default
// (`consistent_random`, CRC32) picks another one for most keys, so steps of one group written by different clients
// can land on different partitions; the processors move each step to its home partition before assembling it, so a
// group is assembled in one place (docs/design/group-completion.md).

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 (32-bit, seed 0x9747b28c) of some bytes, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  switch (length & 3) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: murmur2 folds the tail bytes in by falling through
    case 3:
      h ^= data[whole + 2]! << 16;
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: as above
    case 2:
      h ^= data[whole + 1]! << 8;
    case 1:
      h ^= data[whole]!;
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The home partition of a group id among `partitions` (≥ 1): murmur2(groupId) & 0x7fffffff mod partitions. */
export function homePartition(groupId: string, partitions: number): number {
  return (murmur2(Buffer.from(groupId, 'utf8')) & 0x7fffffff) % partitions;
}
