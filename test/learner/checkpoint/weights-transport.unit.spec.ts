// Which transport the weights take, and what a part reads for each kind of weightsUri: the file:// checkpoint
// and the weights-topic blob of the same version give the same tensors; a kafka: URI without Kafka, or naming
// another topic or run, is refused before anything is read.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { loadConfig } from '../../../core/config.js';
import { checkpointFromBlob, checkpointUri, readCheckpoint, readWeightsBlob, writeCheckpoint } from '../../../learner/checkpoint/checkpoint.js';
import { sha256Hex, WeightsAssembly, weightsRecords, weightsTopicUri } from '../../../learner/checkpoint/weights-chunks.js';
import { versionCheckpoints, weightsTransport } from '../../../learner/checkpoint/weights-transport.js';

const dir = await mkdtemp(join(tmpdir(), 'trajflow-weights-'));
after(() => rm(dir, { recursive: true, force: true }));

async function aCheckpoint(version: number): Promise<string> {
  const { directory } = await writeCheckpoint(dir, {
    runId: 'run-w',
    version,
    parentVersion: null,
    updates: 0,
    tokenizer: 'test',
    replyWords: ['a', 'b'],
    model: { width: 4 } as never,
    weights: [
      { name: 'w', shape: [2, 3], values: Float32Array.from([1, 2, 3, 4, 5, 6]) },
      { name: 'b', shape: [3], values: Float32Array.from([0.5, -0.5, 7]) },
    ],
    optimizer: [{ name: 'm', shape: [1], values: Float32Array.from([9]) }],
    offsets: { 'samples/0': '12' },
    recentSampleIds: ['s1'],
    lastStep: null,
  });
  return directory;
}

test('TRAJFLOW_WEIGHTS: unset follows where the broker is; topic and file are taken as said; anything else is a ConfigError naming it', () => {
  const managed = loadConfig({});
  const external = loadConfig({ TRAJFLOW_KAFKA_BROKERS: 'kafka-1:9092' });
  assert.equal(weightsTransport(managed, {}), 'file');
  assert.equal(weightsTransport(external, {}), 'topic');
  assert.equal(weightsTransport(external, { TRAJFLOW_WEIGHTS: 'auto' }), 'topic');
  assert.equal(weightsTransport(managed, { TRAJFLOW_WEIGHTS: 'topic' }), 'topic');
  assert.equal(weightsTransport(external, { TRAJFLOW_WEIGHTS: 'file' }), 'file');
  assert.throws(() => weightsTransport(managed, { TRAJFLOW_WEIGHTS: 's3' }), /TRAJFLOW_WEIGHTS='s3' is not a weights transport: use topic/);
});

test("the blob on the topic carries the checkpoint's weights without the learner's state, and reads back as the same tensors", async () => {
  const directory = await aCheckpoint(3);
  const fromDisk = await readCheckpoint(directory);
  const { manifest, bytes } = await readWeightsBlob(directory);
  assert.deepEqual([manifest.offsets, manifest.recentSampleIds, manifest.optimizer, manifest.lastStep], [{}, [], [], null]);
  assert.equal(sha256Hex(bytes), fromDisk.manifest.checksum);
  const assembly = new WeightsAssembly('run-w');
  for (const r of weightsRecords('run-w', 3, bytes, manifest, 7)) assembly.apply(r.key, r.value);
  const state = assembly.state(3, fromDisk.manifest.checksum);
  assert.equal(state.kind, 'complete');
  const fromTopic = checkpointFromBlob(state.kind === 'complete' ? state.manifest.checkpoint : null, state.kind === 'complete' ? state.bytes : Buffer.alloc(0), 'kafka:t/run-w/v3');
  assert.deepEqual(fromTopic.weights, fromDisk.weights);
  assert.deepEqual(fromTopic.optimizer, []);
  assert.throws(() => checkpointFromBlob(manifest, bytes, 'kafka:t/run-w/v3', 'f'.repeat(64)), /expected ffff/);
  assert.throws(() => checkpointFromBlob({ format: 'other' }, bytes, 'kafka:t/run-w/v3'), /unknown checkpoint format other/);
});

test('a file:// weightsUri is read from disk and checked against the event checksum', async () => {
  const directory = await aCheckpoint(4);
  const { manifest } = await readCheckpoint(directory);
  const checkpoints = versionCheckpoints(undefined);
  const read = await checkpoints.read({ weightsUri: checkpointUri(directory), checksum: manifest.checksum, version: 4 });
  assert.equal(read.manifest.version, 4);
  await assert.rejects(checkpoints.read({ weightsUri: checkpointUri(directory), checksum: '0'.repeat(64), version: 4 }), /expected 0000/);
  await checkpoints.close();
});

test('a kafka: weightsUri needs Kafka, and the topic and run this part follows', async () => {
  const event = { weightsUri: weightsTopicUri('p.policy.weights', 'run-w', 2), checksum: '0'.repeat(64), version: 2 };
  await assert.rejects(versionCheckpoints(undefined).read(event), /is on a weights topic, and this part was given no Kafka/);
  const elsewhere = versionCheckpoints({ kafka: {} as Kafka, topic: 'q.policy.weights', runId: 'run-w' });
  await assert.rejects(elsewhere.read(event), /names another topic, run or version than q\.policy\.weights, run-w v2/);
  const otherRun = versionCheckpoints({ kafka: {} as Kafka, topic: 'p.policy.weights', runId: 'run-x' });
  await assert.rejects(otherRun.read(event), /names another topic, run or version/);
});
