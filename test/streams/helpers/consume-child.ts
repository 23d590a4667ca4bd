// A consumer in its own process, for the crash and shutdown tests:
//   consume-child.ts <topic> <groupId> <expected> <ackCount> <hang|signals>
// It acknowledges the first <ackCount> events; once they are committed and all <expected> events have
// arrived it prints {"event":"received-all"}. In `hang` mode it then waits to be killed; in `signals`
// mode SIGTERM closes it gracefully (commit, leave the group, exit 0).
import { loadConfig } from '../../../core/config.js';
import { connectBackbone, createEventConsumer, shutdownOnSignals } from '../../../streams/index.js';
import { retryRetriable } from '../../../streams/retry.js';

const [topic, groupId, expectedText, ackText, mode] = process.argv.slice(2);
if (!topic || !groupId || !expectedText || !ackText || (mode !== 'hang' && mode !== 'signals')) {
  console.error('usage: consume-child.ts <topic> <groupId> <expected> <ackCount> <hang|signals>');
  process.exit(2);
}
const expected = Number(expectedText);
const ackCount = Number(ackText);

const backbone = await connectBackbone(loadConfig(), { clientId: 'test-child' });
const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
  topic,
  groupId,
  deadLetters: backbone.deadLetters,
  commitIntervalMs: 100,
  sessionTimeoutMs: 6000,
});
if (mode === 'signals') shutdownOnSignals([consumer, backbone]);

let received = 0;
consumer.events$.subscribe((envelope) => {
  received++;
  if (received <= ackCount) envelope.ack();
  if (received === expected) void reportWhenCommitted();
});

async function reportWhenCommitted(): Promise<void> {
  const admin = backbone.kafka.admin();
  await admin.connect();
  // Poll the group's committed offset until it covers the acknowledged events.
  for (;;) {
    const [committed] = await retryRetriable(() => admin.fetchOffsets({ groupId: groupId!, topics: [topic!] }));
    const offset = Number(committed?.partitions[0]?.offset ?? -1);
    if (offset >= ackCount) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await admin.disconnect();
  console.log(JSON.stringify({ event: 'received-all' }));
}
