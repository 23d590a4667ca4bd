// Unit: released episode marks wait for their partition's next transaction, and a new consumer generation
// drops them unwritten (processors/exactly-once/mark-releases.ts says why).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MarkReleases } from '../../../processors/exactly-once/mark-releases.js';

test('released keys are taken once, by partition, in release order', () => {
  const releases = new MarkReleases();
  releases.add(0, ['g|r|e1']);
  releases.add(2, ['g|r|e7']);
  releases.add(0, ['g|r|e2', 'g|r|e3']);
  releases.add(1, []);
  assert.deepEqual(
    [...releases.take()],
    [
      [0, ['g|r|e1', 'g|r|e2', 'g|r|e3']],
      [2, ['g|r|e7']],
    ],
  );
  assert.deepEqual([...releases.take()], [], 'taken keys are not taken again');
});

test('a new generation drops what is pending: nothing released before it is deleted after it', () => {
  const releases = new MarkReleases();
  releases.add(0, ['g|r|e1', 'g|r|e2']);
  releases.add(3, ['g|r|e9']);
  assert.equal(releases.dropPending(), 3);
  assert.deepEqual([...releases.take()], []);
  releases.add(3, ['g|r|e10']);
  assert.deepEqual([...releases.take()], [[3, ['g|r|e10']]], 'releases of the new generation are written');
});
