// Unit: the remembering partitioner picks exactly the partitions kafkajs' DefaultPartitioner picks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Partitioners, type PartitionerArgs } from 'kafkajs';
import { rememberingPartitioner } from '../../streams/partitioner.js';

const metadata = (count: number) => Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 1, partitionErrorCode: 0, replicas: [1], isr: [1] }));

test('keyed messages land where murmur2 puts them, for string and Buffer keys, before and after a topic grows', () => {
  const ours = rememberingPartitioner();
  const theirs = Partitioners.DefaultPartitioner();
  for (const partitions of [4, 8, 4, 1]) {
    for (let i = 0; i < 200; i++) {
      for (const key of [`group-${i}`, Buffer.from(`group-${i}`)]) {
        const args: PartitionerArgs = { topic: 't', partitionMetadata: metadata(partitions), message: { key, value: 'v' } };
        assert.equal(ours(args), theirs(args), `${String(key)} over ${partitions}`);
        assert.equal(ours(args), theirs(args), 'remembered');
      }
    }
  }
  // An explicit partition wins over the memo.
  assert.equal(ours({ topic: 't', partitionMetadata: metadata(4), message: { key: 'group-1', value: 'v', partition: 3 } }), 3);
});
