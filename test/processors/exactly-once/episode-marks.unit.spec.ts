import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EpisodeMarks, episodeMarkKey } from '../../../processors/exactly-once/episode-marks.js';

const mark = (episodeId: string, partition: number, maxOffset: number) => ({
  key: episodeMarkKey('g', 'run', episodeId),
  topic: 'steps',
  partition,
  maxOffset: String(maxOffset),
  status: 'emitted' as const,
});

test('a mark is released once the committed offset of its partition has passed its last step', () => {
  const marks = new EpisodeMarks('g');
  marks.add(mark('e1', 0, 9));
  marks.add(mark('e2', 0, 20));
  marks.add(mark('e3', 1, 5));
  assert.ok(marks.has('run', 'e1'));
  // Partition 0 committed up to 10 (next to read): e1's steps (≤ 9) can never be read again; e2's can.
  assert.deepEqual(marks.release([{ topic: 'steps', partition: 0, offset: 10n }]), [episodeMarkKey('g', 'run', 'e1')]);
  assert.equal(marks.has('run', 'e1'), false);
  assert.ok(marks.has('run', 'e2'));
  // Positions of another partition or topic release nothing of partition 0.
  assert.deepEqual(marks.release([{ topic: 'other', partition: 0, offset: 100n }]), []);
  assert.deepEqual(marks.release([{ topic: 'steps', partition: 1, offset: 5n }]), []);
  assert.deepEqual(marks.release([{ topic: 'steps', partition: 1, offset: 6n }]), [episodeMarkKey('g', 'run', 'e3')]);
  assert.equal(marks.size, 1);
});
