import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidEventError, type StepEvent } from '../../schemas/index.js';
import { StepPublisher, type EventProducer } from '../../streams/index.js';
import { makeStep } from '../../bench/load/events.js';

/** Records what would be sent; the publisher's checks run before any of this. */
function recordingProducer() {
  const sent: Array<{ topic: string; key: unknown; value: StepEvent }> = [];
  const producer = {
    send: async (topic: string, _event: string, value: StepEvent, key: unknown) => {
      sent.push({ topic, key, value });
    },
  } as unknown as EventProducer;
  return { producer, sent };
}

test('publishes a step to the steps topic keyed by its group id', async () => {
  const { producer, sent } = recordingProducer();
  const step = makeStep({ groupId: 'task-17' });
  await new StepPublisher(producer, 'p.env.steps').publish(step);
  assert.deepEqual(sent, [{ topic: 'p.env.steps', key: 'task-17', value: step }]);
});

const badSteps: Array<[string, Partial<StepEvent> | Record<string, unknown>, string]> = [
  ['a negative step index', { stepIndex: -1 }, 'stepIndex'],
  ['log-probs not aligned with action tokens', { actionLogProbs: [-0.5] }, 'actionLogProbs'],
  ['a positive log-prob', { actionTokenIds: [1, 2], actionLogProbs: [-0.1, 0.3] }, 'actionLogProbs[1]'],
  ['an empty group id', { groupId: '' }, 'groupId'],
  ['a reward that is not finite', { reward: Number.NaN }, 'reward'],
  ['a wrong Avro type', { policyVersion: 'v3' }, 'policyVersion'],
  // What HTTP ingest refuses, the SDK refuses: ids the read API could not query by, numbers Avro cannot hold.
  ['a run id with a space', { runId: 'my run' }, 'runId'],
  ['an episode id over 256 characters', { episodeId: 'e'.repeat(257) }, 'episodeId'],
  ['a log-prob below the float32 range', { actionTokenIds: [1], actionLogProbs: [-1e39] }, 'actionLogProbs[0]'],
];

for (const [what, override, field] of badSteps) {
  test(`rejects a step with ${what}, naming the field, and sends nothing`, () => {
    const { producer, sent } = recordingProducer();
    const publisher = new StepPublisher(producer, 'p.env.steps');
    const bad = { ...makeStep(), ...override } as StepEvent;
    assert.throws(
      () => publisher.publish(bad),
      (error: unknown) => error instanceof InvalidEventError && error.field === field && error.message.includes(field),
    );
    assert.throws(() => publisher.publishAll([makeStep(), bad]), InvalidEventError);
    assert.equal(sent.length, 0);
  });
}
