// Integration (real Kafka): policy weights through <prefix>.policy.weights. The reader reassembles versions
// written in many chunks, refuses a torn one at once and a retired one after its wait; and actors in a
// process with a TRAJFLOW_HOME of their own (no file shared with the learner's) follow the learner's
// versions through the topic alone, each part pointed at the broker as at an external cluster.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { ensureTopics } from '../../../infra/topics.js';
import { writeCheckpoint } from '../../../learner/checkpoint/checkpoint.js';
import { retireRecords, sha256Hex, weightsRecords } from '../../../learner/checkpoint/weights-chunks.js';
import { openWeightsReader, publishCheckpointWeights } from '../../../learner/checkpoint/weights-topic.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../../streams/index.js';
import { readEvents, uniqueName } from '../../helpers/kafka.js';
import { testProcessing } from '../../processors/helpers/processing.js';

let backbone: Backbone;
const homes: string[] = [];
before(async () => {
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-weights-topic' });
});
after(async () => {
  await backbone.close();
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

async function isolated(): Promise<TrajflowConfig> {
  const config = { ...loadConfig(), topicPrefix: uniqueName('weights') };
  await ensureTopics(config);
  return config;
}

async function home(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `trajflow-${name}-`));
  homes.push(dir);
  return dir;
}

/** A checkpoint of `version` whose 300 float32 weights (1,200 bytes) differ per version. */
async function checkpointOf(root: string, runId: string, version: number): Promise<string> {
  const values = Float32Array.from({ length: 300 }, (_, i) => version * 1000 + i);
  const { directory } = await writeCheckpoint(root, {
    runId,
    version,
    parentVersion: version === 0 ? null : version - 1,
    updates: version,
    tokenizer: 'test',
    replyWords: ['a'],
    model: { width: 4 } as never,
    weights: [{ name: 'w', shape: [300], values }],
    optimizer: [],
    offsets: {},
    recentSampleIds: [],
    lastStep: null,
  });
  return directory;
}

test('versions in 100-byte chunks read back whole; a torn version fails at once; a retired one is gone', { timeout: 90_000 }, async () => {
  const config = await isolated();
  const topic = topicName(config, 'policy.weights');
  const runId = uniqueName('run');
  const root = await home('weights-learner');
  for (let version = 0; version <= 4; version++) await publishCheckpointWeights(backbone.producer, topic, await checkpointOf(root, runId, version), { keep: 2, chunkBytes: 100 });
  // A torn v5: its manifest names 12 chunks, chunk 7 never written.
  const torn = weightsRecords(runId, 5, Buffer.alloc(1200, 1), {}, 100).filter((r) => r.key !== `${runId}/v5/7`);
  for (const r of torn) await backbone.producer.sendRaw(topic, r);
  const reader = openWeightsReader(backbone.kafka, topic, runId, { timeoutMs: 3000, log: () => {} });
  try {
    const v4 = await reader.load(4, sha256Hex(Buffer.from(Float32Array.from({ length: 300 }, (_, i) => 4000 + i).buffer)));
    assert.equal(v4.manifest.chunks, 12);
    assert.equal(new Float32Array(v4.bytes.buffer, v4.bytes.byteOffset, 300)[299], 4299);
    assert.equal((await reader.load(3)).manifest.version, 3);
    const started = Date.now();
    await assert.rejects(reader.load(5, '0'.repeat(64)), /chunk\(s\) 7 of 12 missing/);
    assert.ok(Date.now() - started < 3000, 'a torn version is an error once the reader is at the end, not after the wait');
    // keep 2: publishing v4 retired v2 (and v3 retired v1, v2 retired v0).
    await assert.rejects(reader.load(2, '0'.repeat(64)), /no weights of run .* v2 after 3 s/);
    // Tombstones once more for v3: absent from then on.
    for (const r of retireRecords(runId, 3, 12)) await backbone.producer.sendRaw(topic, r);
    await assert.rejects(reader.load(3, '0'.repeat(64)), /no weights of run .* v3/);
  } finally {
    await reader.close();
  }
});

const cli = fileURLToPath(new URL('../../../bin/trajflow.mjs', import.meta.url));

interface Part {
  readonly exited: Promise<number | null>;
  readonly output: () => string;
  kill(): void;
}

/** A `trajflow` part in a process of its own, with its own TRAJFLOW_HOME, pointed at the broker as at an external cluster. */
function part(config: TrajflowConfig, trajflowHome: string, args: string[]): Part {
  let output = '';
  const child = spawn(process.execPath, [cli, ...args], {
    env: {
      ...process.env,
      TRAJFLOW_HOME: trajflowHome,
      TRAJFLOW_TOPIC_PREFIX: config.topicPrefix,
      TRAJFLOW_KAFKA_BROKERS: config.kafka.brokers.join(','),
      TRAJFLOW_CLICKHOUSE_URL: config.clickhouse.url,
      TRAJFLOW_WEIGHTS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))), output: () => output, kill: () => child.kill('SIGKILL') };
}

test('actors with a TRAJFLOW_HOME of their own follow 3 learner versions through the weights topic', { timeout: 240_000 }, async () => {
  const config = await isolated();
  const runId = uniqueName('run');
  const scoped = { ...backbone, config, steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')) };
  const processors = await startProcessors(scoped, { consumerGroupId: uniqueName('processors'), processing: testProcessing, groupSize: 4, flushIntervalMs: 50 });
  const learnerHome = await home('learner');
  const actorsHome = await home('actors');
  const model = { width: 32, layers: 1, heads: 2, contextLength: 128 };
  const learner = part(config, learnerHome, [
    'learner',
    ...['--run-id', runId, '--env', 'FrozenLake', '--updates', '3', '--batch-tokens', '800', '--min-samples', '4', '--max-wait-ms', '300'],
    ...['--width', '32', '--layers', '1', '--heads', '2', '--context', '128', '--backend', 'wasm'],
  ]);
  // Iteration i waits (max staleness 1) for version i − 1: iterations 0..4 need versions 1, 2 and 3 loaded.
  const actors = part(config, actorsHome, [
    'actors',
    ...['--run-id', runId, '--env', 'FrozenLake', '--env-options', '{"slippery":false}', '--groups', '2', '--group-size', '4', '--iterations', '5'],
    ...['--max-staleness', '1', '--model', JSON.stringify(model), '--progress-ms', '0'],
  ]);
  try {
    let timer: NodeJS.Timeout | undefined;
    const codes = await Promise.race([Promise.all([learner.exited, actors.exited]), new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 200_000)))]);
    clearTimeout(timer);
    const outputs = `learner:\n${learner.output().slice(-4000)}\nactors:\n${actors.output().slice(-4000)}`;
    assert.ok(codes !== null, `the parts did not finish within 200 s\n${outputs}`);
    assert.deepEqual(codes, [0, 0], outputs);
  } finally {
    learner.kill();
    actors.kill();
    await processors.close();
  }
  const versions = (await readEvents(backbone, config, 'policy.versions', 'policy_version')).filter((v) => v.runId === runId);
  assert.deepEqual([...new Set(versions.map((v) => v.version))], [0, 1, 2, 3]);
  const weightsTopic = topicName(config, 'policy.weights');
  for (const v of versions) assert.equal(v.weightsUri, `kafka:${weightsTopic}/${encodeURIComponent(runId)}/v${v.version}`, 'an external cluster: weights on the topic');
  // The steps say which version sampled them: the actors loaded each learned version (a failed load keeps the old one).
  const steps = (await readEvents(backbone, config, 'env.steps', 'step')).filter((s) => s.runId === runId);
  const sampledWith = [...new Set(steps.map((s) => s.policyVersion))].sort();
  assert.deepEqual(
    sampledWith.filter((v) => v >= 1),
    [1, 2, 3],
    `versions the actors sampled with: ${sampledWith}\n${actors.output()}`,
  );
  assert.doesNotMatch(actors.output(), /could not load policy version/);
  // Nothing of the learner's in the actors' home: its checkpoints stayed in its own.
  assert.ok((await readdir(join(learnerHome, 'checkpoints'))).length > 0);
  assert.deepEqual(
    (await readdir(actorsHome)).filter((entry) => entry === 'checkpoints'),
    [],
  );
  console.log(`weights topic: actors sampled with versions ${sampledWith} (${steps.length} steps), loaded from ${weightsTopic}`);
});
