// Unit: read_committed filtering of aborted transactions (kafkajs' filter, patched at install by patch-package from
// patches/kafkajs+2.2.4.patch). Two transactional producers interleave on one partition and both abort; a
// fetch that starts after both transactions began must drop every record of both — kafkajs 2.2.4 as shipped
// let the second producer's records through (one aborted transaction activated per message).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type Message = { offset: string; key: Buffer | null; isControlRecord?: boolean; batchContext: { producerId: string; inTransaction: boolean } };
const filter = require('kafkajs/src/consumer/filterAbortedMessages.js') as (args: {
  messages: Message[];
  abortedTransactions: { producerId: string; firstOffset: string }[];
}) => Message[];

const record = (offset: number, producerId: string, inTransaction = true): Message => ({
  offset: String(offset),
  key: Buffer.from(`k${offset}`),
  batchContext: { producerId, inTransaction },
});
const abort = (offset: number, producerId: string): Message => ({
  offset: String(offset),
  key: Buffer.from([0, 0, 0, 0]),
  isControlRecord: true,
  batchContext: { producerId, inTransaction: true },
});

test('a fetch starting inside two interleaved aborted transactions drops all their records, keeps the others', () => {
  // Offsets 10.. : A (pid 7) and B (pid 8) both began before offset 20, where this fetch starts; C (pid 9) commits.
  const messages = [record(20, '8'), record(21, '7'), record(22, '9'), record(23, '8'), abort(24, '7'), abort(25, '8'), record(26, '7', false), record(27, '8')];
  const kept = filter({
    messages,
    abortedTransactions: [
      { producerId: '8', firstOffset: '11' },
      { producerId: '7', firstOffset: '10' },
    ],
  });
  assert.deepEqual(
    kept.filter((m) => !m.isControlRecord).map((m) => Number(m.offset)),
    [22, 26, 27],
    'records of both aborted transactions are dropped; after its abort marker a producer is read again',
  );
});

test('without aborted transactions every record passes; a plain record whose key looks like a marker is data', () => {
  const messages = [record(1, '7'), { ...record(2, '7'), key: Buffer.from([0, 0, 0, 0]) }, record(3, '7')];
  assert.equal(filter({ messages, abortedTransactions: [] }).length, 3);
  const kept = filter({ messages, abortedTransactions: [{ producerId: '7', firstOffset: '1' }] });
  assert.deepEqual(
    kept.map((m) => Number(m.offset)),
    [],
    'a data record with key 0000 does not end the aborted transaction',
  );
});
