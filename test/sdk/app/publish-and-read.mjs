// The script test/sdk/pack.e2e.spec.ts runs in an empty project where only the packed trajflow tarball is
// installed: it imports nothing but 'trajflow' (and node:), publishes one finished one-step episode to
// <TRAJFLOW_TOPIC_PREFIX>.env.steps, reads the step back from the topic, then waits for the trajectory the
// processors make of it (docs/reference/wire-contract.md: the step announces its group of one). It prints one JSON line per result for the test to check.
//   node publish-and-read.mjs <runId>
import { randomUUID } from 'node:crypto';
import { classifyDecodeError, connectBackbone, createEventConsumer, createReplay, eventDecoder, loadConfig, topicName } from 'trajflow';

const runId = process.argv[2];
if (!runId) throw new Error('usage: publish-and-read.mjs <runId>');
const TRAJECTORY_TIMEOUT_MS = 60_000;

const config = loadConfig();
const backbone = await connectBackbone(config, { clientId: 'sdk-pack-test' });
const step = {
  eventId: randomUUID(),
  runId,
  envName: 'PackedEnv',
  envVersion: 'v1',
  groupId: `${runId}-g0`,
  episodeId: `${runId}-g0-e0`,
  stepIndex: 0,
  observation: 'A _ G',
  observationTokenIds: null,
  action: '<think>right</think><answer>Right</answer>',
  actionTokenIds: [812, 77],
  actionLogProbs: [-0.21, -1.5],
  policyVersion: 0,
  reward: 1,
  terminated: true,
  truncated: false,
  actionValid: true,
  stateKey: 'pos=0',
  metrics: { success: 1 },
  info: { groupSize: '1' }, // the contract: a group of one episode is complete at its end
  eventTimeMs: Date.now(),
};
await backbone.steps.publish(step);

// The step as the topic holds it: a replay from the beginning to the end it had when it started.
const replay = await createReplay(backbone.kafka, { topic: topicName(config, 'env.steps'), decode: eventDecoder(backbone.codec, 'step'), classify: classifyDecodeError });
const steps = await new Promise((resolve, reject) => {
  const found = [];
  replay.events$.subscribe({ next: (envelope) => envelope.value.eventId === step.eventId && found.push(envelope.value), error: reject, complete: () => resolve(found) });
});
console.log(JSON.stringify({ kind: 'step', published: step, read: steps }));

// The trajectory: a live consumer of the trajectories topic (an ephemeral group, from the beginning).
const trajectories = createEventConsumer(backbone.kafka, backbone.codec, 'trajectory', { topic: topicName(config, 'trajectories'), deadLetters: 'skip', autoAck: true });
const trajectory = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`no trajectory for ${step.episodeId} within ${TRAJECTORY_TIMEOUT_MS} ms`)), TRAJECTORY_TIMEOUT_MS);
  const subscription = trajectories.events$.subscribe({
    next: (envelope) => {
      if (envelope.value.episodeId !== step.episodeId) return;
      clearTimeout(timer);
      subscription.unsubscribe();
      resolve(envelope.value);
    },
    error: reject,
  });
});
console.log(JSON.stringify({ kind: 'trajectory', trajectory }));
await trajectories.close();
await backbone.close();
