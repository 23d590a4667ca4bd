// Fault suite: a transaction the worker never finishes. kafkajs can lose a request with a broker connection
// and leave its promise unsettled; a processors pipeline waiting on it wrote nothing, and said nothing, for
// minutes (a CI run of the 3-broker loss test stalled this way for 300 s). The transaction client now fails
// a request past its deadline, the pipeline fails with a TransactionFailedError naming the partition, closes
// promptly (the worker, with its stuck producer, is terminated), and a fresh pipeline — what the supervisor
// starts — writes every sample once from the committed offsets.
//
// The lost request is staged with holdCommits (the fault tests' hook: the worker waits at the commit until
// released), never released, and a deadline of 4 s. The second test stages a rebalance's setup that never
// ends — its first stage waits for that held transaction — against a setup deadline of 4 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Consumer } from 'kafkajs';
import { topicName } from '../../core/config.js';
import { TransactionFailedError } from '../../processors/exactly-once/transactional-emitter.js';
import { startProcessors, type ProcessorsOptions } from '../../processors/pipeline/processor.js';
import { StepPublisher } from '../../streams/index.js';
import { groupSteps } from '../../bench/load/episodes.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { scopedBackbone } from '../helpers/scoped-backbone.js';
import { joinIntruder, resumeUntilSampled } from '../processors/helpers/pipeline-checks.js';
import { testProcessing } from '../processors/helpers/processing.js';

const scope = scopedBackbone('faults-lost-txn');

/** Processors whose every commit is held, for good, with the given deadlines. */
function heldProcessors(consumerGroupId: string, deadlines: Pick<ProcessorsOptions, 'transactionDeadlineMs' | 'setupDeadlineMs'>) {
  return startProcessors(scope.backbone, { consumerGroupId, processing: testProcessing, groupSize: 4, flushIntervalMs: 50, holdCommits: true, log: () => undefined, ...deadlines });
}

test('a transaction the worker never finishes fails the pipeline at its deadline; a fresh one writes every sample once', { timeout: 180_000 }, async () => {
  const { backbone, config } = scope;
  const runId = uniqueName('run').replace(/\./g, '-');
  const steps = groupSteps(runId, 4, 4, 3);
  await new StepPublisher(backbone.producer, topicName(config, 'env.steps')).publishAll(steps);
  const consumerGroupId = `${config.topicPrefix}.processors`;
  const stuck = await heldProcessors(consumerGroupId, { transactionDeadlineMs: 4000 });
  const failure = stuck.done.then(
    () => null,
    (error: unknown) => error,
  );
  try {
    await waitFor(() => stuck.emitter.commitHold!.held, 'a transaction to reach its (held) commit', 60_000);
    const heldAt = Date.now();
    const error = await Promise.race([failure, new Promise((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000).unref())]);
    assert.ok(error instanceof TransactionFailedError, `the pipeline failed, got ${String(error)}`);
    assert.match(error.message, /has not finished a write on partition \d+ in \d+ s/);
    assert.ok(Date.now() - heldAt >= 3000, 'not before the deadline');
  } finally {
    const closing = Date.now();
    await stuck.close();
    assert.ok(Date.now() - closing < 20_000, `close() took ${Date.now() - closing} ms with the worker stuck`);
  }

  const episodes = steps.length / 3;
  const written = await resumeUntilSampled(backbone, config, consumerGroupId, episodes);
  assert.equal(new Set(written).size, episodes);
  assert.equal(written.length, episodes, 'no sample twice');
});

test("a rebalance's setup that never ends fails the pipeline at its deadline, naming its stage, and closes promptly", { timeout: 180_000 }, async () => {
  const { backbone, config } = scope;
  const runId = uniqueName('run').replace(/\./g, '-');
  await new StepPublisher(backbone.producer, topicName(config, 'env.steps')).publishAll(groupSteps(runId, 4, 4, 3));
  const consumerGroupId = `${config.topicPrefix}.processors-setup`;
  const stuck = await heldProcessors(consumerGroupId, { transactionDeadlineMs: 120_000, setupDeadlineMs: 4000 });
  const failure = stuck.done.then(
    () => null,
    (error: unknown) => error,
  );
  let intruder: Consumer | undefined;
  try {
    await waitFor(() => stuck.emitter.commitHold!.held, 'a transaction to reach its (held) commit', 60_000);
    const rebalancesBefore = stuck.consumer.stats.rebalances;
    // A second member joins: the processors rebalance, and the new generation's setup first waits for the
    // transaction in flight — held for good.
    intruder = await joinIntruder(backbone, config, consumerGroupId);
    await waitFor(() => stuck.consumer.stats.rebalances > rebalancesBefore, 'the processors to rebalance', 60_000);
    const error = await Promise.race([failure, new Promise((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000).unref())]);
    assert.ok(error instanceof TransactionFailedError, `the pipeline failed, got ${String(error)}`);
    assert.match(error.message, /a rebalance's setup did not finish in \d+ s \(stuck settling the transactions in flight\)/);
  } finally {
    const closing = Date.now();
    await stuck.close();
    assert.ok(Date.now() - closing < 30_000, `close() took ${Date.now() - closing} ms with the setup stuck`);
    await intruder?.disconnect();
  }
});
