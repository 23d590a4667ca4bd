// A processors instance in its own process, for the crash and consumer-group tests:
//   processors-child.ts <topicPrefix> <consumerGroupId> <instance>
// Prints {"event":"flushed","samples":N} after each transaction that wrote samples, and
// {"event":"assigned","partitions":N} after each rebalance.
import { loadConfig } from '../../../core/config.js';
import { connectBackbone } from '../../../streams/index.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import { testProcessing } from './processing.js';

const [prefix, consumerGroupId, instance] = process.argv.slice(2);
if (!prefix || !consumerGroupId || instance === undefined) {
  console.error('usage: processors-child.ts <topicPrefix> <consumerGroupId> <instance>');
  process.exit(2);
}
const config = { ...loadConfig(), topicPrefix: prefix };
const backbone = await connectBackbone(config, { clientId: `processors-child-${instance}` });
const handle = await startProcessors(backbone, { consumerGroupId, processing: testProcessing, groupSize: 4, flushIntervalMs: 50 });
let reported = 0;
let assigned = -1;
setInterval(() => {
  const { assignedPartitions, rebalances } = handle.consumer.stats;
  if (rebalances > 0 && assignedPartitions !== assigned) {
    assigned = assignedPartitions;
    console.log(JSON.stringify({ event: 'assigned', partitions: assigned }));
  }
  if (handle.emitter.stats.samples !== reported) {
    reported = handle.emitter.stats.samples;
    console.log(JSON.stringify({ event: 'flushed', samples: reported }));
  }
}, 20);
handle.done.catch((error) => {
  console.error(error);
  process.exit(1);
});
