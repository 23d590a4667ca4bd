// Integration (real Kafka, Debian's python3-confluent-kafka and python3-avro): the Python program that
// docs/reference/wire-contract.md shows for reading trajectories and samples back runs as printed. A trajectory and a
// sample written by trajflow under a test prefix are decoded by it, with the writer schemas it reads from the
// prefix's schemas topic.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, projectRoot, topicName, type TrajflowConfig } from '../core/config.js';
import { ensureTopics } from '../infra/topics.js';
import type { TrainingSampleEvent, TrajectoryEvent } from '../schemas/index.js';
import { connectBackbone, type Backbone } from '../streams/index.js';
import { aptUnavailable, ensureDebianPackages, run } from './examples/debian-packages.js';
import { uniqueName } from './helpers/kafka.js';

const PYTHON = '/usr/bin/python3';
const INSTALL_TIMEOUT_MS = 8 * 60_000;
const skip = aptUnavailable();
const work = mkdtempSync(join(tmpdir(), 'trajflow-read-back-'));
let config: TrajflowConfig;
let backbone: Backbone;

/** The page's Python program: the fenced block that starts with `# read_back.py`. */
function readBackProgram(): string {
  const page = readFileSync(join(projectRoot, 'docs', 'reference', 'wire-contract.md'), 'utf8');
  const block = /```python\n(# read_back\.py[\s\S]*?)```/.exec(page);
  assert.ok(block, 'the wire contract shows read_back.py');
  return block[1]!;
}

before(
  async () => {
    if (skip !== null) return;
    await ensureDebianPackages(PYTHON, ['confluent_kafka', 'avro.schema', 'avro.io'], ['python3-confluent-kafka', 'python3-avro'], INSTALL_TIMEOUT_MS);
    config = { ...loadConfig(), topicPrefix: uniqueName('wire') };
    await ensureTopics(config);
    // Connecting publishes every schema to <prefix>.schemas, where the program finds the writer schemas.
    backbone = await connectBackbone(config, { clientId: 'test-wire-contract-python' });
  },
  { timeout: INSTALL_TIMEOUT_MS + 60_000 },
);

after(async () => {
  await backbone?.close();
  rmSync(work, { recursive: true, force: true });
});

test("the page's Python program decodes trajflow's trajectories and samples", { skip: skip ?? false, timeout: 120_000 }, async () => {
  const now = Date.now();
  const trajectory: TrajectoryEvent = {
    runId: 'wire-run',
    envName: 'LineWalk',
    envVersion: 'v1',
    groupId: 'wire-run-g0',
    episodeId: 'wire-run-g0-e0',
    outcome: 'terminated',
    stepCount: 1,
    totalReward: 1,
    success: true,
    invalidActions: 0,
    gapCount: 0,
    minPolicyVersion: 3,
    maxPolicyVersion: 3,
    firstEventTimeMs: now,
    lastEventTimeMs: now,
    steps: [
      {
        stepIndex: 0,
        observation: 'A _ G',
        observationTokenIds: null,
        action: '<answer>Right</answer>',
        actionTokenIds: [5, 6],
        actionLogProbs: [-0.5, -0.25],
        policyVersion: 3,
        reward: 1,
        actionValid: true,
        stateKey: 'pos=0',
        eventTimeMs: now,
      },
    ],
    metrics: { success: 1 },
  };
  const sample: TrainingSampleEvent = {
    sampleId: 'wire-run-g0-e0-s',
    runId: 'wire-run',
    groupId: 'wire-run-g0',
    episodeId: 'wire-run-g0-e0',
    policyVersion: 3,
    tokenIds: [1, 5, 6],
    lossMask: [0, 1, 1],
    advantages: [0, 0.5, 0.5],
    behaviourLogProbs: [0, -0.5, -0.25],
    reward: 1,
    estimator: 'grpo',
    groupSize: 2,
    groupRewardMean: 0.5,
    groupRewardStd: 0.5,
    stepAdvantages: null,
    eventTimeMs: now,
    batch: { batchId: 'wire-batch', iteration: 7, samples: 2 },
  };
  await backbone.producer.send(topicName(config, 'trajectories'), 'trajectory', trajectory, trajectory.groupId);
  await backbone.producer.send(topicName(config, 'samples'), 'sample', sample, sample.groupId);

  const program = join(work, 'read_back.py');
  writeFileSync(program, readBackProgram());
  const read = async (name: string) => {
    const result = await run(PYTHON, [program, config.kafka.brokers.join(','), config.topicPrefix, name], { timeoutMs: 60_000 });
    assert.equal(result.code, 0, result.output);
    return result.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  const trajectories = await read('trajectories');
  assert.equal(trajectories.length, 1, JSON.stringify(trajectories));
  assert.deepEqual(
    { ...trajectories[0], firstEventTimeMs: undefined, lastEventTimeMs: undefined },
    {
      runId: 'wire-run',
      envName: 'LineWalk',
      envVersion: 'v1',
      groupId: 'wire-run-g0',
      episodeId: 'wire-run-g0-e0',
      outcome: 'terminated',
      stepCount: 1,
      totalReward: 1,
      success: true,
      invalidActions: 0,
      gapCount: 0,
      minPolicyVersion: 3,
      maxPolicyVersion: 3,
      firstEventTimeMs: undefined,
      lastEventTimeMs: undefined,
      metrics: { success: 1 },
    },
  );
  // timestamp-millis comes back as a datetime, printed as text: the same instant.
  const printed = String(trajectories[0]!.firstEventTimeMs);
  assert.equal(Date.parse(printed.replace(' ', 'T').replace(/(\.\d{3})\d*/, '$1')), now, printed);

  const samples = await read('samples');
  assert.equal(samples.length, 1, JSON.stringify(samples));
  assert.equal(samples[0]!.sampleId, sample.sampleId);
  assert.equal(samples[0]!.groupSize, 2);
  assert.deepEqual(samples[0]!.batch, { batchId: 'wire-batch', iteration: 7, samples: 2 });
});
