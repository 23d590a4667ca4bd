// Fault suite: a processors transaction that runs past its timeout (30 s). The transaction coordinator aborts
// it and bumps the producer's epoch, so its commit is refused as fenced — though no other member holds the
// partition and no rebalance comes. Before, the processors took that as "another member owns the partition
// now", dropped the producer and left the partition unwritten until some later rebalance (none comes with one
// member). Now a fenced producer with no new generation within the grace period fails the pipeline with a
// TransactionFailedError, which the processors' supervisor answers by starting over from the committed offsets
// (processors/exactly-once/transactional-emitter.ts, watchFenced); a fresh pipeline then writes every sample,
// each once.
//
// The commit is held (holdCommits, the fault tests' hook in the transaction worker) until the coordinator has
// aborted the transaction: its abort markers raise the output topic's end offsets, which the test polls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { topicName } from '../../core/config.js';
import { TransactionFailedError } from '../../processors/exactly-once/transactional-emitter.js';
import { startProcessors } from '../../processors/pipeline/processor.js';
import { StepPublisher, type Backbone } from '../../streams/index.js';
import { groupSteps } from '../../bench/load/episodes.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { scopedBackbone } from '../helpers/scoped-backbone.js';
import { resumeUntilSampled } from '../processors/helpers/pipeline-checks.js';
import { testProcessing } from '../processors/helpers/processing.js';

const scope = scopedBackbone('faults-txn-timeout');

/** The sum of a topic's end offsets (data, and the markers transactions leave). */
async function endOffsets(backbone: Backbone, topic: string): Promise<number> {
  const admin = backbone.kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

test('a transaction aborted by its timeout: the processors start over instead of leaving the partition unwritten; every sample once', { timeout: 240_000 }, async () => {
  const { backbone, config } = scope;
  const runId = uniqueName('run').replace(/\./g, '-');
  const steps = groupSteps(runId, 8, 4, 3);
  await new StepPublisher(backbone.producer, topicName(config, 'env.steps')).publishAll(steps);
  const consumerGroupId = `${config.topicPrefix}.processors`;
  const samplesTopic = topicName(config, 'samples');
  const held = await startProcessors(backbone, { consumerGroupId, processing: testProcessing, groupSize: 4, flushIntervalMs: 50, writeAsQueued: false, holdCommits: true });
  const failure = held.done.then(
    () => null,
    (error: unknown) => error,
  );
  const hold = held.emitter.commitHold!;
  try {
    await waitFor(() => hold.held, 'a transaction to reach its commit', 60_000);
    // Its samples are written, uncommitted; the coordinator's abort (≈ 30–40 s on) adds its markers.
    const written = await endOffsets(backbone, samplesTopic);
    await waitFor(
      async () => (await endOffsets(backbone, samplesTopic)) > written,
      "the coordinator to abort the transaction past its timeout (the output's end offsets rise)",
      120_000,
      1000,
    );
    hold.release();
    const error = await Promise.race([failure, new Promise((resolve) => setTimeout(() => resolve('still running'), 60_000).unref())]);
    assert.ok(error instanceof TransactionFailedError, `the pipeline failed to start over, got ${String(error)}`);
    assert.match(error.message, /fenced and no rebalance followed/);
    assert.ok(held.emitter.stats.fenced >= 1, 'the commit was refused as fenced');
  } finally {
    hold.release();
    await held.close();
  }
  // What the supervisor does next: a fresh pipeline from the committed offsets.
  const episodes = steps.length / 3;
  const written = await resumeUntilSampled(backbone, config, consumerGroupId, episodes);
  console.log(`fault[transaction timeout]: ${episodes} episodes, ${written.length} samples committed (${written.length - new Set(written).size} duplicates)`);
  assert.equal(new Set(written).size, episodes);
  assert.equal(written.length, episodes, 'no sample twice');
});
