// A sink in its own process, for the crash test: sink-child.ts <topicPrefix> <database> <consumerGroupId>
// Prints {"stored":N} whenever the number of events stored (and acked) changes.
import { loadConfig } from '../../../core/config.js';
import { connectBackbone } from '../../../streams/index.js';
import { startSink } from '../../../storage/sink/sink.js';

const [prefix, database, groupId] = process.argv.slice(2);
if (!prefix || !database || !groupId) {
  console.error('usage: sink-child.ts <topicPrefix> <database> <consumerGroupId>');
  process.exit(2);
}
const base = loadConfig();
const config = { ...base, topicPrefix: prefix, clickhouse: { ...base.clickhouse, database } };
const backbone = await connectBackbone(config, { clientId: 'sink-child' });
const sink = await startSink(backbone, { groupId, batchRows: 100, flushIntervalMs: 50, sessionTimeoutMs: 6000 });
let reported = -1;
setInterval(() => {
  if (sink.stats.stored !== reported) {
    reported = sink.stats.stored;
    console.log(JSON.stringify({ stored: reported }));
  }
}, 20);
sink.done.catch((error) => {
  console.error(error);
  process.exit(1);
});
