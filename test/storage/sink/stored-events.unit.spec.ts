// When the sink may acknowledge an event (and so commit its offset): once every row it became is inserted.
// An event of several rows, in batches of different tables inserted in any order, goes with the last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Envelope } from '../../../streams/index.js';
import { ByteWriter } from '../../../storage/sink/row-binary.js';
import { TranscodedStep } from '../../../storage/sink/step-transcoder.js';
import { eventsStored, rowItems, rowsOf, type SinkItem } from '../../../storage/sink/stored-events.js';

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

test('an event of one row is stored with its insert', () => {
  const e = envelope('1');
  const items = rowItems([{ table: 'samples', row: { a: 1 } }], e);
  assert.deepEqual(items.map((i) => [i.table, i.shared]), [['samples', null]]);
  const stored: Envelope<Buffer | null>[] = [];
  assert.equal(eventsStored(items, (x) => stored.push(x)), 1);
  assert.deepEqual(stored, [e]);
});

test('an event of several rows in several tables is stored with the last insert, whatever the order', () => {
  const e = envelope('2');
  const [trajectory, metrics] = rowItems([{ table: 'trajectories', row: { a: 1 } }, { table: 'trajectory_metrics', row: { b: 2 } }], e);
  assert.equal(trajectory!.shared, metrics!.shared, 'one count for the event');
  const stored: Envelope<Buffer | null>[] = [];
  assert.equal(eventsStored([metrics!], (x) => stored.push(x)), 0, 'not after its first table');
  assert.equal(stored.length, 0);
  assert.equal(eventsStored([trajectory!], (x) => stored.push(x)), 1);
  assert.deepEqual(stored, [e]);
});

test('a transcoded step is its own event: stored through its source; the insert sends it as it is', () => {
  const e = envelope('3');
  const step = new TranscodedStep(new ByteWriter(8), 0, 0, Buffer.alloc(0), e);
  const other = rowItems([{ table: 'steps', row: { c: 3 } }], envelope('4'))[0]!;
  const items: SinkItem[] = [step, other];
  assert.deepEqual(rowsOf(items), [step, { c: 3 }]);
  const stored: Envelope<Buffer | null>[] = [];
  assert.equal(eventsStored(items, (x) => stored.push(x)), 2);
  assert.deepEqual(stored.map((x) => x.offset), ['3', '4']);
});
