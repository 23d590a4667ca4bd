// A deliberately slow consumer in its own process, for the backpressure test (slow-consumer.int.spec.ts):
//   node --expose-gc --import tsx slow-consumer-child.ts <groupId> <maxInFlight> <acksPerSecond>
// It consumes <prefix>.env.steps (prefix from TRAJFLOW_TOPIC_PREFIX) with at most <maxInFlight>
// unacknowledged events, acknowledges the oldest ones at <acksPerSecond>, and prints one JSON line every
// 250 ms: its memory after a full GC, and what it has received, acknowledged and holds.
import { loadConfig, topicName } from '../../core/config.js';
import type { StepEvent } from '../../schemas/index.js';
import { connectBackbone, createEventConsumer, type Envelope } from '../../streams/index.js';

const [groupId, maxInFlightText, rateText] = process.argv.slice(2);
if (!groupId || !maxInFlightText || !rateText) {
  console.error('usage: slow-consumer-child.ts <groupId> <maxInFlight> <acksPerSecond>');
  process.exit(2);
}
const config = loadConfig();
const backbone = await connectBackbone(config, { clientId: 'test-faults-slow-consumer' });
const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
  topic: topicName(config, 'env.steps'),
  groupId,
  deadLetters: backbone.deadLetters,
  maxInFlight: Number(maxInFlightText),
  commitIntervalMs: 200,
  sessionTimeoutMs: 10_000,
});
const held: Envelope<StepEvent>[] = [];
consumer.events$.subscribe((envelope) => held.push(envelope));
const perTick = Math.max(1, Math.round(Number(rateText) / 10));
setInterval(() => {
  for (let i = 0; i < perTick && held.length > 0; i++) held.shift()!.ack();
}, 100);
setInterval(() => {
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const { delivered, acked, commits } = consumer.stats;
  console.log(JSON.stringify({ rss: memory.rss, heapUsed: memory.heapUsed, delivered, acked, held: held.length, commits }));
}, 250);
