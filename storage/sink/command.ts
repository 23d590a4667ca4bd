// `trajflow sink`: stores every trajflow event in ClickHouse (storage/sink/sink.ts) until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import type { Command } from '../../infra/cli/command.js';
import { loadConfig } from '../../core/config.js';
import { ensureUp } from '../../infra/up.js';
import { connectBackbone, shutdownOnSignals } from '../../streams/index.js';
import { defaultMaxInFlight, SINK_DEFAULTS, startSink } from './sink.js';
import { positiveInt } from '../../infra/cli/flags.js';

const usage =
  'trajflow sink [--batch-rows 20000] [--flush-ms 1000] [--inserts-in-flight 2] [--max-in-flight 3×batch-rows] [--max-in-flight-mib 256] [--include-sample-tokens] [--transcode-worker] [--consumer-group <prefix>.sink]';

export const sinkCommand: Command = {
  summary: 'store every event in ClickHouse, in batches (at least once; duplicates collapse by key)',
  usage,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        'batch-rows': { type: 'string' },
        'flush-ms': { type: 'string' },
        'inserts-in-flight': { type: 'string' },
        'max-in-flight': { type: 'string' },
        'max-in-flight-mib': { type: 'string' },
        'include-sample-tokens': { type: 'boolean', default: false },
        // Transcode steps on a worker thread (SinkOptions.transcodeWorker: for machines with cores to spare).
        'transcode-worker': { type: 'boolean', default: false },
        'consumer-group': { type: 'string' },
      },
    });
    const batchRows = positiveInt('batch-rows', values['batch-rows'], SINK_DEFAULTS.batchRows);
    const flushIntervalMs = positiveInt('flush-ms', values['flush-ms'], SINK_DEFAULTS.flushIntervalMs);
    const insertsInFlight = positiveInt('inserts-in-flight', values['inserts-in-flight'], SINK_DEFAULTS.insertsInFlight);
    const maxInFlight = positiveInt('max-in-flight', values['max-in-flight'], defaultMaxInFlight(batchRows));
    const maxInFlightBytes = positiveInt('max-in-flight-mib', values['max-in-flight-mib'], SINK_DEFAULTS.maxInFlightBytes / 2 ** 20) * 2 ** 20;
    const config = loadConfig();
    await ensureUp(config);
    const backbone = await connectBackbone(config, { clientId: 'trajflow-sink' });
    let failing = false;
    const sink = await startSink(backbone, {
      groupId: values['consumer-group'],
      batchRows,
      flushIntervalMs,
      insertsInFlight,
      maxInFlight,
      maxInFlightBytes,
      includeSampleTokens: values['include-sample-tokens'],
      transcodeWorker: values['transcode-worker'],
      onInsert: () => {
        if (failing) console.error('sink: ClickHouse inserts succeed again, catching up');
        failing = false;
      },
      onInsertError: (table, error, attempt) => {
        if (!failing || attempt % 10 === 0) console.error(`sink: insert into ${table} failed (attempt ${attempt}), retrying without acknowledging: ${error.message}`);
        failing = true;
      },
    });
    console.log(
      `sink: consumer group '${values['consumer-group'] ?? `${config.topicPrefix}.sink`}' → ClickHouse ${config.clickhouse.url} database ${config.clickhouse.database}; Ctrl-C to stop`,
    );
    let last = 0;
    const report = setInterval(() => {
      if (sink.stats.stored === last) return;
      console.log(`sink: ${sink.stats.stored - last} events stored in the last 10 s (${sink.stats.stored} in all, ${sink.stats.deadLettered} dead-lettered)`);
      last = sink.stats.stored;
    }, 10_000);
    report.unref();
    shutdownOnSignals([sink, backbone]);
    await sink.done;
    clearInterval(report);
    return 0;
  },
};
