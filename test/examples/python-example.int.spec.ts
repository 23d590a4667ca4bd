// Integration: examples/python/publish_steps.py (Debian's python3-confluent-kafka and python3-avro)
// writes step events straight to the real broker; trajflow's typed consumer decodes them and
// assembleTrajectories turns them into the episodes the script played, with nothing dead-lettered.
// Then end to end, as against `npm start`: live processors and sink on a topic prefix of the test's own, the
// script publishes and prints back the trajectories, samples and ClickHouse rows trajflow made of its steps.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig, projectRoot, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { startProcessors } from '../../processors/pipeline/processor.js';
import { startSink } from '../../storage/sink/sink.js';
import { testProcessing } from '../processors/helpers/processing.js';
import { assembleTrajectories } from '../../processors/assembly/index.js';
import { DeadLetterRoute, connectBackbone, createEventConsumer, type Backbone, type Envelope } from '../../streams/index.js';
import type { StepEvent } from '../../schemas/index.js';
import { collect, createTopic, uniqueName } from '../helpers/kafka.js';
import { aptUnavailable, ensureDebianPackages, run } from './debian-packages.js';
import { checkReadBack } from './read-back.js';

// Debian's packages install for Debian's interpreter, not for another python3 that may come first on PATH.
const PYTHON = '/usr/bin/python3';
const SCRIPT = join(projectRoot, 'examples', 'python', 'publish_steps.py');
const INSTALL_TIMEOUT_MS = 8 * 60_000; // a first `apt-get update && apt-get install` on a slow mirror
const GROUPS = 2;
const EPISODES = 3;

interface EpisodeSummary {
  groupId: string;
  episodeId: string;
  steps: number;
  totalReward: number;
  terminated: boolean;
  truncated: boolean;
  invalidActions: number;
}

const skip = aptUnavailable();
let backbone: Backbone;

before(
  async () => {
    if (skip !== null) return;
    await ensureDebianPackages(PYTHON, ['confluent_kafka', 'avro.schema', 'avro.io'], ['python3-confluent-kafka', 'python3-avro'], INSTALL_TIMEOUT_MS);
    backbone = await connectBackbone(loadConfig(), { clientId: 'test-python-example' });
  },
  { timeout: INSTALL_TIMEOUT_MS + 30_000 },
);

after(async () => {
  await backbone?.close();
});

test('the Python example publishes step events that trajflow assembles into its episodes', { skip: skip ?? false, timeout: 90_000 }, async () => {
  const topic = await createTopic(backbone.kafka, 'python-steps', 2);
  const deadLetterTopic = await createTopic(backbone.kafka, 'python-deadletter', 1);
  const runId = uniqueName('py').replace(/\./g, '-');

  const result = await run(
    PYTHON,
    [
      SCRIPT,
      '--bootstrap',
      backbone.config.kafka.brokers.join(','),
      '--topic',
      topic,
      '--run-id',
      runId,
      '--groups',
      String(GROUPS),
      '--episodes',
      String(EPISODES),
      '--no-read-back',
    ],
    { timeoutMs: 60_000 },
  );
  assert.equal(result.code, 0, `publish_steps.py failed:\n${result.output}`);
  const summaries = result.output
    .split('\n')
    .filter((line) => line.startsWith('{"'))
    .map((line) => JSON.parse(line) as EpisodeSummary & { kind: string })
    .filter((line) => line.kind === 'published');
  assert.equal(summaries.length, GROUPS * EPISODES);

  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
    topic,
    groupId: uniqueName('python-example'),
    deadLetters: new DeadLetterRoute(backbone.producer, deadLetterTopic),
  });
  const assembled = await collect(consumer.events$.pipe(assembleTrajectories<Envelope<StepEvent>>({ stepOf: (envelope) => envelope.value })), GROUPS * EPISODES, 60_000);
  for (const output of assembled) for (const envelope of output.sources) envelope.ack();
  await consumer.close();

  // Nothing was dead-lettered: not counted by the consumer, nothing in the dead-letter topic.
  assert.equal(consumer.stats.deadLettered, 0);
  const admin = backbone.kafka.admin();
  await admin.connect();
  const deadOffsets = await admin.fetchTopicOffsets(deadLetterTopic);
  await admin.disconnect();
  assert.deepEqual(
    deadOffsets.map((p) => p.high),
    ['0'],
  );

  const byEpisode = new Map(assembled.map((a) => [a.trajectory.episodeId, a]));
  for (const summary of summaries) {
    const output = byEpisode.get(summary.episodeId);
    assert.ok(output, `no trajectory for ${summary.episodeId}`);
    const t = output.trajectory;
    assert.equal(output.complete, true, `${t.episodeId} is ${t.outcome}`);
    assert.equal(t.runId, runId);
    assert.equal(t.groupId, summary.groupId);
    assert.equal(`${t.envName}/${t.envVersion}`, 'LineWalk/v1');
    assert.equal(t.stepCount, summary.steps);
    assert.equal(t.totalReward, summary.totalReward);
    assert.equal(t.outcome, summary.terminated ? 'terminated' : 'truncated');
    assert.equal(t.invalidActions, summary.invalidActions);
    assert.equal(t.gapCount, 0);
    assert.equal(t.success, summary.terminated);
    assert.deepEqual(
      t.steps.map((s) => s.stepIndex),
      [...Array(summary.steps).keys()],
    );
    for (const step of t.steps) {
      assert.equal(step.actionTokenIds.length, step.actionLogProbs.length);
      assert.ok(Math.abs(step.eventTimeMs - Date.now()) < 10 * 60_000, `eventTimeMs ${step.eventTimeMs} is epoch milliseconds`);
    }
  }

  // The example's environment is deterministic: group g starts at cell (100 + g) % 3 and the goal is
  // cell 4; episode 0 walks right, 1 walks left until truncated (6 turns), 2 stumbles once then walks right.
  for (let group = 0; group < GROUPS; group++) {
    const start = (100 + group) % 3;
    const episode = (e: number) => byEpisode.get(`${runId}-g${group}-e${e}`)!.trajectory;
    assert.deepEqual([episode(0).stepCount, episode(0).totalReward, episode(0).outcome], [4 - start, 1, 'terminated']);
    assert.deepEqual([episode(1).stepCount, episode(1).totalReward, episode(1).outcome], [6, 0, 'truncated']);
    assert.deepEqual([episode(2).stepCount, episode(2).invalidActions, episode(2).outcome], [5 - start, 1, 'terminated']);
    const first = episode(0).steps[0]!;
    assert.equal(first.stateKey, `pos=${start}`);
    assert.equal(first.observation, ['A _ _ _ G', '_ A _ _ G', '_ _ A _ G'][start]);
    assert.equal(first.action, '<think>the goal is to the right</think><answer>Right</answer>');
    assert.ok(
      first.actionLogProbs.every((lp) => Math.abs(lp - Math.fround(-0.05)) < 1e-9),
      'log-probs written as Avro floats',
    );
  }
});

test('the Python example end to end: published steps come back as trajectories, samples and ClickHouse rows within seconds', {
  skip: skip ?? false,
  timeout: 120_000,
}, async () => {
  const config: TrajflowConfig = { ...backbone.config, topicPrefix: uniqueName('pyex').replace(/\./g, '-') };
  await ensureTopics(config);
  const scoped = { ...backbone, config };
  // As `npm start` runs them: the processors with their defaults (group size 8), and the sink.
  const processors = await startProcessors(scoped, { consumerGroupId: `${config.topicPrefix}.processors`, processing: testProcessing });
  const sink = await startSink(scoped, { groupId: `${config.topicPrefix}.sink`, flushIntervalMs: 100, sessionTimeoutMs: 6000 });
  try {
    const runId = uniqueName('pyrun').replace(/\./g, '-');
    const started = Date.now();
    const result = await run(
      PYTHON,
      [SCRIPT, '--bootstrap', backbone.config.kafka.brokers.join(','), '--prefix', config.topicPrefix, '--run-id', runId, '--groups', '2', '--episodes', '3', '--timeout', '30'],
      {
        timeoutMs: 90_000,
      },
    );
    const seconds = (Date.now() - started) / 1000;
    assert.equal(result.code, 0, `publish_steps.py failed:\n${result.output}`);
    console.log(`publish_steps.py: published and read back in ${seconds.toFixed(1)} s`);
    const of = checkReadBack(result.output);
    for (const t of of('trajectory')) assert.ok(t.outcome === 'terminated' || t.outcome === 'truncated', String(t.outcome));
    // LineWalk's scripted episodes: e0 reaches the goal (reward 1), e1 is truncated (0).
    const trajectory = (suffix: string) => of('trajectory').find((t) => (t.episodeId as string).endsWith(suffix))!;
    assert.deepEqual([trajectory('g0-e0').totalReward, trajectory('g0-e0').success, trajectory('g0-e1').outcome], [1, true, 'truncated']);
    assert.equal(processors.stats.groups.closedBy.full, 2);
    assert.equal(processors.stats.groups.closedBy.timeout, 0);
    assert.ok(seconds < 30, `took ${seconds} s`);
  } finally {
    await sink.close({ drain: false });
    await processors.close();
  }
});
