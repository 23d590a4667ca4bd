// A group's home partition is where the Java client and kafkajs put a message keyed by its group id: the same
// partition as kafkajs' DefaultPartitioner for every key and partition count (ASCII and multi-byte keys, every
// tail length), and Kafka's own murmur2 test vectors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Partitioners } from 'kafkajs';
import { homePartition, murmur2 } from '../../../processors/pipeline/home-partition.js';

test('homePartition agrees with kafkajs’ DefaultPartitioner (murmur2, as the Java client)', () => {
  const kafkajs = Partitioners.DefaultPartitioner();
  let compared = 0;
  for (let i = 0; i < 3000; i++) {
    const key = `group-${i}${'é'.repeat(i % 3)}${'x'.repeat(i % 5)}`;
    for (const partitions of [1, 2, 3, 8, 12]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0 }));
      const expected = kafkajs({ topic: 't', partitionMetadata: partitionMetadata as never, message: { key, value: null } });
      assert.equal(homePartition(key, partitions), expected, `${key} over ${partitions}`);
      compared++;
    }
  }
  assert.equal(compared, 15_000);
});

test('murmur2 gives the Java client’s values (Kafka UtilsTest.testMurmur2)', () => {
  const cases: Array<[string, number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];
  for (const [key, value] of cases) assert.equal(murmur2(Buffer.from(key)), value, key);
});
