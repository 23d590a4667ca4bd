// Unit: what a weights reader's load() does next (learner/checkpoint/weights-load.ts): a complete version is handed
// out, a broken one fails only at the end of the log, an absent one fails at the deadline, otherwise it waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextLoadStep, readPast, type LoadRequest } from '../../../learner/checkpoint/weights-load.js';
import type { WeightsManifest } from '../../../learner/checkpoint/weights-chunks.js';

const request: LoadRequest = { topic: 'w', runId: 'run-a', version: 3, timeoutMs: 3000, deadline: 10_000 };
const broken = { kind: 'broken', reason: 'run-a v3: chunk(s) 1 of 2 missing before its manifest (torn write or retired)' } as const;

test('a complete version is handed out, whatever the time', () => {
  const manifest = { version: 3 } as WeightsManifest;
  const bytes = Buffer.from([1, 2]);
  assert.deepEqual(nextLoadStep({ kind: 'complete', manifest, bytes }, false, 20_000, request), { kind: 'done', manifest, bytes });
});

test('a broken version fails at the end of the log, and waits for a mend before it', () => {
  assert.deepEqual(nextLoadStep(broken, true, 0, request), { kind: 'fail', message: `w: ${broken.reason}` });
  assert.deepEqual(nextLoadStep(broken, false, 0, request), { kind: 'wait', ms: 500 });
  const late = nextLoadStep(broken, false, 10_001, request);
  assert.equal(late.kind, 'fail');
  assert.match(late.kind === 'fail' ? late.message : '', /^w: run-a v3: chunk\(s\) 1 of 2 missing .* after 3 s\. Does the learner write weights/);
});

test('an absent version waits at most 500 ms at a time, up to just past the deadline, then fails', () => {
  assert.deepEqual(nextLoadStep({ kind: 'absent' }, true, 0, request), { kind: 'wait', ms: 500 });
  assert.deepEqual(nextLoadStep({ kind: 'absent' }, false, 9_800, request), { kind: 'wait', ms: 201 });
  assert.deepEqual(nextLoadStep({ kind: 'absent' }, false, 10_000, request), { kind: 'wait', ms: 1 });
  const step = nextLoadStep({ kind: 'absent' }, false, 10_001, request);
  assert.equal(step.kind, 'fail');
  assert.match(step.kind === 'fail' ? step.message : '', /^w: no weights of run run-a v3 after 3 s\. .*TRAJFLOW_WEIGHTS=topic/);
});

test('the end of the log is reached once every non-empty partition is read up to its last record', () => {
  const ends = [
    [0, 4n],
    [1, -1n],
  ] as const;
  assert.equal(readPast(ends, new Map()), false);
  assert.equal(readPast(ends, new Map([[0, 3n]])), false);
  assert.equal(readPast(ends, new Map([[0, 4n]])), true);
  assert.equal(readPast([], new Map()), true);
});
