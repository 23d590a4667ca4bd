// Fault suite (issue 30, item 2): a 3-broker KRaft cluster on this machine (`trajflow up --brokers 3`: three
// combined broker+controller nodes, replication factor 3, min.insync.replicas=2) in a home and on ports of its
// own, started and stopped by this test. The main loop runs on it — actors → processors → samples → learner, the
// sink into ClickHouse (the shared server, a database of this run's own) — and the broker that leads partition 0
// of env.steps is SIGKILLed mid-run, then started again later. No part is restarted by the test: each rides
// out the loss by itself. Nothing the actors had acknowledged may be lost (acks=all reached two replicas at
// least) and nothing may be written twice: steps, trajectories, samples, ClickHouse rows.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig, topicName } from '../../core/config.js';
import { createKafka } from '../../streams/kafka-client.js';
import { kafkaNodes, startKafka, stopKafka } from '../../infra/kafka/server.js';
import { isAlive, isListening, readPidFile } from '../../infra/process.js';
import { retryRetriable } from '../../streams/retry.js';
import { waitFor } from '../helpers/kafka.js';
import { actorArgs, actorsDone, createFaultRun, readTopic, SMALL_LEARNER, type Part } from './harness.js';
import { describe, learnerDrops, waitDrained, type Drained } from './ledger.js';

const ITERATIONS = 12;
const MIN_SAMPLES = 4;
const NODES = 3;

/** A base port with the cluster's 2 × 3 ports (broker and controller per node, base + 0 … base + 5) free. */
async function freeBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + 2 * Math.floor(Math.random() * 5000);
    const taken = await Promise.all(Array.from({ length: 2 * NODES }, (_, i) => isListening(base + i)));
    if (!taken.some(Boolean)) return base;
  }
}

const home = mkdtempSync(join(tmpdir(), 'trajflow-broker-loss-'));
const base = await freeBase();
// Set before anything reads the config: the harness and the parts it spawns take process.env.
Object.assign(process.env, {
  TRAJFLOW_HOME: home,
  TRAJFLOW_KAFKA_BROKERS: '',
  TRAJFLOW_KAFKA_NODES: String(NODES),
  TRAJFLOW_KAFKA_PORT: String(base),
  TRAJFLOW_KAFKA_CONTROLLER_PORT: String(base + 1),
  // The shared ClickHouse, as an external server: this home starts none of its own.
  TRAJFLOW_CLICKHOUSE_URL: loadConfig().clickhouse.url,
});
const config = loadConfig();

/** The node id that leads partition 0 of the run's env.steps. */
async function leaderOfSteps0(prefix: string): Promise<number> {
  const admin = createKafka(config).admin();
  await admin.connect();
  try {
    const metadata = await retryRetriable(() => admin.fetchTopicMetadata({ topics: [topicName({ topicPrefix: prefix }, 'env.steps')] }));
    const partition = metadata.topics[0]!.partitions.find((p) => p.partitionId === 0)!;
    assert.equal(partition.replicas.length, NODES, 'env.steps has a replica on every broker');
    return partition.leader;
  } finally {
    await admin.disconnect();
  }
}

test('a broker of three SIGKILLed mid-run and started again: nothing acknowledged lost, nothing doubled, no part restarted', { timeout: 600_000 }, async (t) => {
  const cluster = await startKafka(config);
  console.log(`fault[broker loss]: ${NODES}-node cluster up in ${(cluster.elapsedMs / 1000).toFixed(1)} s on ${config.kafka.brokers.join(',')}`);
  const run = await createFaultRun('brokerloss');
  const { runId } = run;
  let main: Drained | undefined;
  let outcome: { acknowledged: number; figures: Drained['figures'] } | undefined;
  try {
    // The main loop as `trajflow train` runs it, small (harness.ts): no dashboard, nothing reads it here.
    run.part('sink', ['--flush-ms', '200']);
    const processors = run.part('processors', ['--group-size', '4']);
    const learner = run.part('learner', ['--run-id', runId, '--env', 'FrozenLake', ...SMALL_LEARNER]);
    const actors = run.part('actors', actorArgs(runId, 0, ITERATIONS, ['--max-staleness', '2']));
    await learner.waitLine(/learner: update \d+ → v1\b/, 'the first update', 240_000);

    const leader = await leaderOfSteps0(run.prefix);
    const node = kafkaNodes(config).find((n) => n.nodeId === leader)!;
    const pid = readPidFile(node.paths.pidFile)!;
    const stepsBefore = (await readTopic(run, 'env.steps', 'step')).filter((s) => s.runId === runId).length;
    process.kill(-pid, 'SIGKILL');
    await waitFor(() => !isAlive(pid), `broker ${leader} (pid ${pid}) to die`, 30_000, 50);
    const killedAt = Date.now();
    const newLeader = await waitForNewLeader(run.prefix, leader);
    console.log(
      `fault[broker loss]: SIGKILLed broker ${leader} (pid ${pid}), leader of ${run.prefix}.env.steps/0, with ${stepsBefore} steps written; ` +
        `broker ${newLeader} leads it ${((Date.now() - killedAt) / 1000).toFixed(1)} s later`,
    );

    // The run goes on with two brokers: more steps are acknowledged while the third is down.
    await waitFor(
      async () => (await readTopic(run, 'env.steps', 'step')).filter((s) => s.runId === runId).length >= stepsBefore + 40,
      '40 more steps written with a broker down',
      120_000,
      1000,
    );
    const stepsWhileDown = (await readTopic(run, 'env.steps', 'step')).filter((s) => s.runId === runId).length - stepsBefore;
    const restarted = await startKafka(config);
    console.log(
      `fault[broker loss]: broker ${leader} started again after ${((Date.now() - killedAt) / 1000).toFixed(1)} s down (${stepsWhileDown} steps written meanwhile); pid ${restarted.nodes.find((n) => n.nodeId === leader)?.pid}`,
    );

    const summary = await actorsDone(actors, 300_000);
    main = await waitDrained(run, runId, { learnerMinSamples: MIN_SAMPLES, learnerDropped: () => learnerDrops(learner.lines), timeoutMs: 180_000, context: () => run.tails() });
    const f = main.figures;
    const ch = main.clickhouse;
    console.log(describe('broker loss', f, ch));
    console.log(
      `fault[broker loss]: actors acknowledged ${summary.steps} steps; on the topic ${f.stepsSent} (${f.stepDuplicates} duplicated, ${summary.steps - f.stepsDistinct} lost); ` +
        `trajectories ${f.trajectories} (${f.trajectoryDuplicates} duplicated), samples ${f.samples} (${f.sampleDuplicates} duplicated); ` +
        `ClickHouse steps ${ch.steps} (${ch.steps - f.stepsDistinct} extra), trajectories ${ch.trajectories} (${ch.trajectories - f.episodes} extra), samples ${ch.samples} (${ch.samples - f.samplesDistinct} extra); ` +
        `part lives ${[...run.parts.values()].map((p) => `${p.name} ${p.lives}`).join(', ')}`,
    );

    for (const part of run.parts.values()) {
      assert.ok(part.lives === 1 && (part.running || part.child.exitCode === 0), `${part.name} rode out the broker loss without a restart:\n${part.tail()}`);
    }
    assert.deepEqual(processorsFailures(processors), [], 'the processors reported no failure');
    assert.equal(summary.episodes, ITERATIONS * 8);
    assert.equal(f.stepDuplicates, 0, 'no step event twice');
    assert.equal(f.stepsForeign + f.stepsAltered, 0, 'every trajectory step as sent');
    // ClickHouse: one row per step, trajectory and sample (FINAL), whatever the topics hold twice.
    assert.equal(ch.steps, f.stepsDistinct, 'ClickHouse: a row per step');
    assert.equal(ch.stepEventIds, f.stepsDistinct);
    assert.equal(ch.trajectories, f.episodes, 'ClickHouse: a row per trajectory');
    assert.equal(ch.samples, f.samplesDistinct, 'ClickHouse: a row per sample');
    // The learner trained on through the loss: every version once.
    assert.deepEqual(f.versionGaps, []);
    assert.equal(f.versionConflicts, 0);
    assert.equal(f.versionEvents, f.versions.length, 'no version announced twice');
    outcome = { acknowledged: summary.steps, figures: f };
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${run.tails()}`, { cause: error });
  } finally {
    await run.cleanup();
    await stopKafka(config);
    rmSync(home, { recursive: true, force: true });
  }

  // These two failed in 1 of 2 runs before the kafkajs patch [retry-per-partition] (docs/design/kafka-client.md):
  // kafkajs retried a failed produce per broker, so a partition whose leader moved to a broker that had already
  // answered was never sent (1 of 486 acknowledged steps lost) and a broker still answering was sent its messages
  // again (4 trajectories and 4 samples committed twice). With the patch 5 of 5 runs were exact (2026-12-02);
  // test/streams/kafkajs-retry-per-partition.unit.spec.ts reproduces both defects without a broker.
  await t.test('0 acknowledged steps lost across the broker loss', () => {
    const { acknowledged, figures } = outcome!;
    assert.equal(figures.stepsSent, acknowledged, 'the topic holds exactly the steps the actors had acknowledged');
    assert.equal(figures.stepsLost + figures.incompleteTrajectories, 0, 'every step in a complete trajectory');
  });
  await t.test('trajectories and samples exactly once on the topics', () => {
    const { figures } = outcome!;
    assert.equal(figures.trajectoryDuplicates, 0, 'no trajectory twice');
    assert.equal(figures.sampleDuplicates, 0, 'no sample twice');
    assert.equal(figures.samplesDistinct, figures.samplesExpected, 'a sample per episode');
  });
});

async function waitForNewLeader(prefix: string, old: number): Promise<number> {
  let leader = old;
  await waitFor(
    async () => {
      leader = await leaderOfSteps0(prefix).catch(() => old);
      return leader !== old && leader >= 0;
    },
    `a new leader for env.steps/0 after broker ${old} died`,
    60_000,
    250,
  );
  return leader;
}

function processorsFailures(processors: Part): string[] {
  return processors.lines.filter((line) => /^(\(life \d+\) )?trajflow processors: /.test(line));
}
