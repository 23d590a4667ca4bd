// The weights topic's pure part: a version as chunk records and a manifest, reassembled and verified as a
// reader sees them in log order; torn, corrupt and retired versions are errors, never partial weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  chunkCount,
  parseWeightsTopicUri,
  retireRecords,
  sha256Hex,
  versionToRetire,
  WeightsAssembly,
  weightsRecords,
  weightsTopicUri,
  type WeightsRecord,
} from '../../../learner/checkpoint/weights-chunks.js';

const RUN = 'run-a';
const meta = { format: 'trajflow-checkpoint-v1', note: 'opaque here' };

function assembled(records: readonly WeightsRecord[], runId = RUN): WeightsAssembly {
  const assembly = new WeightsAssembly(runId);
  for (const r of records) assembly.apply(r.key, r.value);
  return assembly;
}

test('a version becomes ⌈bytes / chunk⌉ chunks, each at most the chunk size, then its manifest last', () => {
  const bytes = randomBytes(2500);
  const records = weightsRecords(RUN, 3, bytes, meta, 1000);
  assert.deepEqual(
    records.map((r) => r.key),
    ['run-a/v3/0', 'run-a/v3/1', 'run-a/v3/2', 'run-a/v3/manifest'],
  );
  assert.deepEqual(
    records.slice(0, 3).map((r) => r.value!.length),
    [1000, 1000, 500],
  );
  const manifest = JSON.parse(records[3]!.value!.toString('utf8'));
  assert.deepEqual({ ...manifest }, { format: 'trajflow-weights-v1', runId: RUN, version: 3, chunks: 3, bytes: 2500, sha256: sha256Hex(bytes), checkpoint: meta });
  assert.equal(chunkCount(2500, 1000), 3);
  assert.equal(chunkCount(0, 1000), 1, 'an empty blob still has one chunk');
  assert.throws(() => weightsRecords(RUN, 3, bytes, meta, 0), /chunkBytes must be a positive integer/);
});

test('the records read back in order give the same bytes, checked against the event checksum', () => {
  const bytes = randomBytes(3333);
  const state = assembled(weightsRecords(RUN, 1, bytes, meta, 1000)).state(1, sha256Hex(bytes));
  assert.equal(state.kind, 'complete');
  assert.ok(state.kind === 'complete' && state.bytes.equals(bytes));
  assert.deepEqual(state.kind === 'complete' && state.manifest.checkpoint, meta);
});

test('chunks without their manifest yet are absent (the reader waits), not broken', () => {
  const records = weightsRecords(RUN, 1, randomBytes(3000), meta, 1000);
  assert.equal(assembled(records.slice(0, -1)).state(1).kind, 'absent');
  assert.equal(assembled([]).state(1).kind, 'absent');
});

test('a manifest whose chunks are not all there is a torn version: an error naming the missing chunk', () => {
  const records = weightsRecords(RUN, 2, randomBytes(3000), meta, 1000);
  const state = assembled([records[0]!, records[2]!, records[3]!]).state(2);
  assert.equal(state.kind, 'broken');
  assert.match(state.kind === 'broken' ? state.reason : '', /chunk\(s\) 1 of 3 missing/);
});

test('a corrupted chunk fails the manifest checksum; a different event checksum fails too', () => {
  const bytes = randomBytes(3000);
  const records = weightsRecords(RUN, 2, bytes, meta, 1000);
  const flipped = Buffer.from(records[1]!.value!);
  flipped[7] = flipped[7]! ^ 0xff;
  const corrupt = assembled([records[0]!, { key: records[1]!.key, value: flipped }, records[2]!, records[3]!]).state(2);
  assert.match(corrupt.kind === 'broken' ? corrupt.reason : 'not broken', /the manifest says/);
  const short = assembled([records[0]!, { key: records[1]!.key, value: flipped.subarray(0, 10) }, records[2]!, records[3]!]).state(2);
  assert.match(short.kind === 'broken' ? short.reason : 'not broken', /chunks hold 2010 bytes, the manifest says 3000/);
  const other = assembled(records).state(2, sha256Hex(Buffer.from('other')));
  assert.match(other.kind === 'broken' ? other.reason : 'not broken', /the policy-version event says/);
});

test('an unreadable or mislabelled manifest is broken, not trusted', () => {
  const records = weightsRecords(RUN, 4, randomBytes(10), meta, 1000);
  const garbage = assembled([records[0]!, { key: 'run-a/v4/manifest', value: Buffer.from('{not json') }]).state(4);
  assert.match(garbage.kind === 'broken' ? garbage.reason : '', /unreadable weights manifest/);
  const otherVersion = weightsRecords(RUN, 5, randomBytes(10), meta, 1000);
  const mislabelled = assembled([records[0]!, { key: 'run-a/v4/manifest', value: otherVersion[1]!.value }]).state(4);
  assert.match(mislabelled.kind === 'broken' ? mislabelled.reason : '', /it names run-a v5/);
});

test('tombstones retire a version: manifest first, so no reader sees a manifest whose chunks are gone', () => {
  const bytes = randomBytes(2000);
  const records = weightsRecords(RUN, 0, bytes, meta, 1000);
  const tombstones = retireRecords(RUN, 0, 2);
  assert.deepEqual(
    tombstones.map((t) => [t.key, t.value]),
    [
      ['run-a/v0/manifest', null],
      ['run-a/v0/0', null],
      ['run-a/v0/1', null],
    ],
  );
  // At every point of the retirement the version is complete or absent, never broken.
  for (let i = 0; i <= tombstones.length; i++) {
    const kind = assembled([...records, ...tombstones.slice(0, i)]).state(0).kind;
    assert.equal(kind, i === 0 ? 'complete' : 'absent', `after ${i} tombstone(s)`);
  }
});

test('read again from the beginning (after an outage), the records give the same versions', () => {
  const a = randomBytes(1500);
  const b = randomBytes(1500);
  const log = [...weightsRecords(RUN, 1, a, meta, 1000), ...weightsRecords(RUN, 2, b, meta, 1000), ...retireRecords(RUN, 1, 2)];
  const twice = assembled([...log, ...log]);
  assert.equal(twice.state(1).kind, 'absent');
  const v2 = twice.state(2, sha256Hex(b));
  assert.ok(v2.kind === 'complete' && v2.bytes.equals(b));
});

test('a version written again after a crash (chunks re-sent, then the manifest) reads whole at the end', () => {
  const bytes = randomBytes(2000);
  const records = weightsRecords(RUN, 6, bytes, meta, 1000);
  // Compaction kept the first manifest and the second write's chunks: broken where the first manifest stands, whole after the second.
  const assembly = assembled([records[2]!]);
  assert.equal(assembly.state(6).kind, 'broken');
  for (const r of records) assembly.apply(r.key, r.value);
  assert.equal(assembly.state(6, sha256Hex(bytes)).kind, 'complete');
});

test("other runs' records and foreign keys are left alone", () => {
  const assembly = assembled([...weightsRecords('run-b', 1, randomBytes(10), meta), { key: 'not-a-weights-key', value: Buffer.from('x') }]);
  assert.equal(assembly.state(1).kind, 'absent');
  assert.equal(assembly.ignored, 1);
  // A run id with slashes is still told apart by the key's last two parts.
  const slashed = assembled(weightsRecords('team/run', 1, Buffer.from('abc'), meta), 'team/run');
  assert.equal(slashed.state(1).kind, 'complete');
});

test('the version retired after publishing is the one `keep` back; none while fewer exist', () => {
  assert.equal(versionToRetire(7, 5), 2);
  assert.equal(versionToRetire(5, 5), 0);
  assert.equal(versionToRetire(4, 5), null);
  assert.throws(() => versionToRetire(4, 0), /keep must be a positive integer/);
});

test('a kafka: weightsUri names the topic, the run (escaped) and the version', () => {
  const uri = weightsTopicUri('p.policy.weights', 'run a/b', 12);
  assert.equal(uri, 'kafka:p.policy.weights/run%20a%2Fb/v12');
  assert.deepEqual(parseWeightsTopicUri(uri), { topic: 'p.policy.weights', runId: 'run a/b', version: 12 });
  assert.equal(parseWeightsTopicUri('file:///tmp/v00000012'), null);
  assert.equal(parseWeightsTopicUri('kafka:p.policy.weights/run/12'), null);
});
