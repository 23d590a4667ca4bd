// Integration: examples/java (the Java Kafka client and Apache Avro's BinaryMessageEncoder) as a custom
// environment end to end, as against `npm start`: live processors and sink on a topic prefix of the test's own;
// the example publishes its groups (keyed by group id, the client's default murmur2 partitioner, the size
// announced) and prints back the trajectories, samples and ClickHouse rows trajflow made of them.
// Maven builds offline first (`mvn -o`), and online (Maven Central) only when something is missing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, projectRoot, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { startProcessors } from '../../processors/pipeline/processor.js';
import { startSink } from '../../storage/sink/sink.js';
import { connectBackbone, type Backbone } from '../../streams/index.js';
import { uniqueName } from '../helpers/kafka.js';
import { testProcessing } from '../processors/helpers/processing.js';
import { run } from './debian-packages.js';
import { checkReadBack } from './read-back.js';

const EXAMPLE = join(projectRoot, 'examples', 'java');
const JAR = join(EXAMPLE, 'target', 'trajflow-custom-env.jar');
const BUILD_TIMEOUT_MS = 15 * 60_000; // a cold Maven build fetches kafka-clients, avro and the plugins

function newestSource(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestSource(join(path, name))));
}

async function build(): Promise<void> {
  if (existsSync(JAR) && statSync(JAR).mtimeMs > Math.max(newestSource(join(EXAMPLE, 'src')), statSync(join(EXAMPLE, 'pom.xml')).mtimeMs)) return;
  const maven = (offline: boolean) => run('mvn', [...(offline ? ['-o'] : []), '-q', '-B', '-Dstyle.color=never', 'package'], { cwd: EXAMPLE, timeoutMs: BUILD_TIMEOUT_MS });
  let result = await maven(true);
  if (result.code !== 0) result = await maven(false);
  if (result.code !== 0 || !existsSync(JAR)) throw new Error(`mvn package in ${EXAMPLE} failed (exit ${result.code}):\n${result.output.slice(-3000)}`);
}

const skip = existsSync('/usr/bin/mvn') || process.env.PATH?.split(':').some((dir) => existsSync(join(dir, 'mvn'))) ? null : 'Maven (mvn) is not installed';
let backbone: Backbone;

before(
  async () => {
    if (skip !== null) return;
    await build();
    backbone = await connectBackbone(loadConfig(), { clientId: 'test-java-example' });
  },
  { timeout: BUILD_TIMEOUT_MS + 30_000 },
);

after(async () => {
  await backbone?.close();
});

test('the Java example end to end: published steps come back as trajectories, samples and ClickHouse rows within seconds', { skip: skip ?? false, timeout: 120_000 }, async () => {
  const config: TrajflowConfig = { ...backbone.config, topicPrefix: uniqueName('javaex').replace(/\./g, '-') };
  await ensureTopics(config);
  const scoped = { ...backbone, config };
  // As `npm start` runs them: the processors with their defaults (group size 8), and the sink.
  const processors = await startProcessors(scoped, { consumerGroupId: `${config.topicPrefix}.processors`, processing: testProcessing });
  const sink = await startSink(scoped, { groupId: `${config.topicPrefix}.sink`, flushIntervalMs: 100, sessionTimeoutMs: 6000 });
  try {
    const runId = uniqueName('javarun').replace(/\./g, '-');
    const started = Date.now();
    const args = ['-jar', JAR, '--bootstrap', backbone.config.kafka.brokers.join(','), '--prefix', config.topicPrefix, '--schemas', join(projectRoot, 'schemas')];
    const result = await run('java', [...args, '--run-id', runId, '--groups', '2', '--episodes', '3', '--timeout', '30'], { timeoutMs: 90_000 });
    const seconds = (Date.now() - started) / 1000;
    assert.equal(result.code, 0, `the Java example failed:\n${result.output}`);
    console.log(`Java example: published and read back in ${seconds.toFixed(1)} s`);
    const of = checkReadBack(result.output);
    // Nothing was re-routed: the Java client's partitioner already put every step on its group's home partition.
    const trajectory = (suffix: string) => of('trajectory').find((t) => (t.episodeId as string).endsWith(suffix))!;
    assert.deepEqual([trajectory('g0-e0').outcome, trajectory('g0-e0').totalReward, trajectory('g0-e0').success], ['terminated', 1, true]);
    assert.equal(trajectory('g0-e1').outcome, 'truncated');
    assert.equal(processors.stats.groups.closedBy.full, 2);
    assert.equal(processors.emitter.stats.rerouted, 0);
    assert.ok(seconds < 60, `took ${seconds} s`);
  } finally {
    await sink.close({ drain: false });
    await processors.close();
  }
});
