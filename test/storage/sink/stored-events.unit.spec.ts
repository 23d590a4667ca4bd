// When the sink may acknowledge an event (and so commit its offset): once every row it became is inserted.
// An event of several rows, in batches of different tables inserted in any order, goes with the last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Envelope } from '../../../streams/index.js';
import { ByteWriter } from '../../../storage/sink/row-binary.js';
import { TranscodedStep } from '../../../storage/sink/step-transcoder.js';
import { eventsStored, pendingEvent, rowsOf, type RowItem, type SinkItem } from '../../../storage/sink/stored-events.js';

const envelope = (offset: string): Envelope<Buffer | null> => ({
  topic: 't',
  partition: 0,
  offset,
  key: null,
  timestamp: 0,
  value: null,
  generation: 1,
  ack: () => assert.fail('the sink acks, not these functions'),
});

/** The items of an event of `n` rows, as the sink makes them. */
function itemsOf(n: number, e: Envelope<Buffer | null>): RowItem[] {
  const shared = pendingEvent(n, e);
  return Array.from({ length: n }, (_, i) => ({ row: { i }, envelope: e, shared }));
}

test('an event of one row is stored with its insert', () => {
  const e = envelope('1');
  const items = itemsOf(1, e);
  assert.equal(items[0]!.shared, null, 'no count to share');
  const stored: Envelope<Buffer | null>[] = [];
  assert.equal(
    eventsStored(items, (x) => stored.push(x)),
    1,
  );
  assert.deepEqual(stored, [e]);
});

test('an event of several rows in several tables is stored with the last insert, whatever the order', () => {
  const e = envelope('2');
  const [trajectory, metrics] = itemsOf(2, e);
  assert.deepEqual(trajectory!.shared, { remaining: 2, envelope: e }, 'one count for the event');
  const stored: Envelope<Buffer | null>[] = [];
  assert.equal(
    eventsStored([metrics!], (x) => stored.push(x)),
    0,
    'not after its first table',
  );
  assert.equal(stored.length, 0);
  assert.equal(
    eventsStored([trajectory!], (x) => stored.push(x)),
    1,
  );
  assert.deepEqual(stored, [e]);
});

test('a transcoded step is its own event: stored through its source; the insert sends it as it is', () => {
  const e = envelope('3');
  const step = new TranscodedStep(new ByteWriter(8), 0, 0, Buffer.alloc(0), e);
  const other = itemsOf(1, envelope('4'))[0]!;
  const items: SinkItem[] = [step, other];
  assert.deepEqual(rowsOf(items), [step, { i: 0 }]);
  const stored: Envelope<Buffer | null>[] = [];
  assert.equal(
    eventsStored(items, (x) => stored.push(x)),
    2,
  );
  assert.deepEqual(
    stored.map((x) => x.offset),
    ['3', '4'],
  );
});
