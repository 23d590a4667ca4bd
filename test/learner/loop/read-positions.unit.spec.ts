// Unit: the positions a checkpoint records (read-positions.ts): past every delivery seen, never past one still held
// for a later update; restored ones kept for partitions not seen since; the consumer's start map updated in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadPositions } from '../../../learner/loop/read-positions.js';

const at = (partition: number, offset: number) => ({ topic: 'samples', partition, offset: String(offset) });

test('past every delivery seen; a held sample holds its partition back', () => {
  const positions = new ReadPositions();
  positions.see(at(0, 10));
  positions.see(at(0, 12));
  positions.see(at(0, 11)); // a redelivery below the newest does not move it back
  positions.see(at(1, 5));
  assert.deepEqual(positions.record(), {}, 'nothing recorded before an update');
  positions.advance(new Map([['samples/1', 5n]]));
  assert.deepEqual(positions.record(), { 'samples/0': '13', 'samples/1': '5' });
  positions.advance(new Map());
  assert.deepEqual(positions.record(), { 'samples/0': '13', 'samples/1': '6' });
});

test('restored positions stay for partitions not seen since, and the start map is the same object throughout', () => {
  const positions = new ReadPositions({ 'samples/0': '40', 'samples/2': '7' });
  const start = positions.start;
  assert.deepEqual(
    [...start],
    [
      ['samples/0', 40n],
      ['samples/2', 7n],
    ],
  );
  positions.see(at(0, 40));
  positions.advance(new Map());
  assert.equal(positions.start, start, 'the consumer reads this map as it goes');
  assert.deepEqual(positions.record(), { 'samples/0': '41', 'samples/2': '7' });
});
