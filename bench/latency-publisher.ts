// The load generator of `bench processors`' latency figure, in its own process (as actors are): publishes
// `groups` groups of steps at a steady rate to the steps topic of TRAJFLOW_TOPIC_PREFIX and reports, over
// IPC, when the broker acknowledged each group's last step (epoch ms, high resolution). Run by
// bench/processors.ts; argv: runId groups intervalMs groupSize episodeLength.
import { loadConfig, topicName } from '../core/config.js';
import { connectBackbone, StepPublisher } from '../streams/index.js';
import { groupSteps } from './load/episodes.js';

const [runId, groupsArg, intervalArg, groupSizeArg, lengthArg] = process.argv.slice(2);
const groups = Number(groupsArg);
const intervalMs = Number(intervalArg);
const config = loadConfig();
const backbone = await connectBackbone(config, { clientId: 'bench-latency-publisher' });
const publisher = new StepPublisher(backbone.producer, topicName(config, 'env.steps'));
const now = () => performance.timeOrigin + performance.now();
const started = performance.now();
const sends: Promise<void>[] = [];
for (let g = 0; g < groups; g++) {
  // Steady rate: group g goes out at started + g·interval.
  const wait = started + g * intervalMs - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const steps = groupSteps(runId!, 1, Number(groupSizeArg), Number(lengthArg), g);
  const groupId = steps[0]!.groupId;
  sends.push(publisher.publishAll(steps).then(() => void process.send!({ groupId, ackedAt: now() })));
}
await Promise.all(sends);
process.send!({ done: true, seconds: (performance.now() - started) / 1000 });
await backbone.close();
process.exit(0);
