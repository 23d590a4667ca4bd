// The consumer's pure decisions (streams/read-ranges.ts, streams/consumer-config.ts): where an offset lies
// against its partition's range, when a replay has read everything, when a pass over a batch yields, and the
// kafkajs consumer's settings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consumerConfig } from '../../streams/consumer-config.js';
import { positionIn, reachesEnd, ReadRanges, SliceClock } from '../../streams/read-ranges.js';

test('an offset is before the start, in the range, or past its end (exclusive); open bounds never exclude', () => {
  const range = { start: 2n, end: 5n };
  assert.deepEqual(
    [1n, 2n, 4n, 5n, 9n].map((o) => positionIn(range, o)),
    ['before-start', 'in-range', 'in-range', 'past-end', 'past-end'],
  );
  assert.equal(positionIn({ start: undefined, end: undefined }, 0n), 'in-range');
  assert.deepEqual(
    [3n, 4n, 5n].map((o) => reachesEnd(range, o)),
    [false, true, true],
  );
  assert.equal(reachesEnd({ start: undefined, end: undefined }, 10n ** 12n), false);
});

test('a replay has read everything once each partition with offsets to read finished; empty ranges count as read', () => {
  const ranges = new ReadRanges(
    new Map([
      ['t/0', 2n],
      ['t/1', 7n],
    ]),
    new Map([
      ['t/0', 4n],
      ['t/1', 7n],
      ['t/2', 3n],
    ]),
  );
  assert.deepEqual(ranges.of('t/0'), { start: 2n, end: 4n });
  assert.deepEqual(ranges.of('t/2'), { start: undefined, end: 3n });
  assert.equal(ranges.empty, false);
  assert.equal(ranges.allRead, false);
  ranges.finish('t/0');
  assert.equal(ranges.allRead, false, 't/2 has offsets 0..2 to read');
  ranges.finish('t/2');
  assert.equal(ranges.allRead, true, 't/1 is empty (its end is its start)');
});

test('without end offsets nothing is ever all read or empty; with only empty ranges it is both', () => {
  const open = new ReadRanges(new Map([['t/0', 2n]]), undefined);
  open.finish('t/0');
  assert.equal(open.allRead, false);
  assert.equal(open.empty, false);
  const empty = new ReadRanges(
    new Map([['t/0', 5n]]),
    new Map([
      ['t/0', 5n],
      ['t/1', 0n],
    ]),
  );
  assert.equal(empty.empty, true);
  assert.equal(empty.allRead, true);
});

test('the slice clock asks the time every 32 messages and is due once the slice has lasted yieldAfterMs', () => {
  let now = 0;
  let asked = 0;
  const clock = new SliceClock(5, () => (asked++, now));
  const due = () => Array.from({ length: 32 }, () => clock.due());
  now = 3;
  assert.deepEqual(due().filter(Boolean), [], 'not yet 5 ms');
  now = 6;
  const round = due();
  assert.deepEqual([round.indexOf(true), round.filter(Boolean).length], [31, 1]);
  assert.equal(asked, 3, 'at construction, then once per 32 messages');
  clock.restart();
  assert.deepEqual(due().filter(Boolean), [], 'a new slice starts at restart()');
});

test('the consumer settings follow the session timeout', () => {
  assert.deepEqual(consumerConfig('g', 30000), {
    groupId: 'g',
    sessionTimeout: 30000,
    heartbeatInterval: 3000,
    rebalanceTimeout: 60000,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 200,
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 3000 },
  });
  assert.equal(consumerConfig('g', 6000).heartbeatInterval, 2000);
});
