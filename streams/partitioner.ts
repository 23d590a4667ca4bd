// kafkajs' DefaultPartitioner (murmur2 of the key, as the Java client) with the partition of each key
// remembered: every keyed message otherwise pays a JS murmur2 of its key and a filter over the topic's
// partitions, a visible share of the processors' CPU where a group's samples and trajectories share one key
// (docs/results/processors.md). The result is the same as the default's — key → murmur2 % partitions — for
// keyed messages; unkeyed ones and messages with an explicit partition go to the default unchanged. The memo
// is keyed by topic and partition count, so a topic that grows maps its keys afresh; it is cleared when it
// gets large. A keyed message to a one-partition topic (the processors' episode marks, one key per episode)
// goes to partition 0 without hashing or remembering, as murmur2 % 1 would send it.
import { Partitioners, type ICustomPartitioner } from 'kafkajs';

const MAX_REMEMBERED = 100_000;

export const rememberingPartitioner: ICustomPartitioner = () => {
  const murmur2 = Partitioners.DefaultPartitioner();
  const remembered = new Map<string, number>();
  return (args) => {
    const { key, partition } = args.message;
    if (key === null || key === undefined || (partition !== null && partition !== undefined)) return murmur2(args);
    if (args.partitionMetadata.length === 1) return 0;
    const id = `${args.topic}\u0000${args.partitionMetadata.length}\u0000${typeof key === 'string' ? key : key.toString('base64')}`;
    let chosen = remembered.get(id);
    if (chosen === undefined) {
      chosen = murmur2(args);
      if (remembered.size >= MAX_REMEMBERED) remembered.clear();
      remembered.set(id, chosen);
    }
    return chosen;
  };
};
