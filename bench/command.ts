// `trajflow bench backbone [--events N] [--rounds R] [--json]`: backbone and codec throughput measured
// side by side in one run. With --json the last line is one JSON object with every figure.
import { cpus } from 'node:os';
import type { Command } from '../infra/cli/command.js';
import { loadConfig } from '../core/config.js';
import { ensureUp } from '../infra/up.js';
import { connectBackbone } from '../streams/index.js';
import { measureCodec } from './codec.js';
import { deleteBenchTopics, measureBackbone } from './backbone.js';
import { deleteProcessorsBenchTopics, measureProcessors } from './processors.js';
import { latencyLines, processorsFlags, roundLines, throughputLines } from './processors-report.js';
import { measureSink } from './sink.js';
import { SINK_DEFAULTS } from '../storage/sink/sink.js';
import { fmt, option } from './args.js';
import { median } from './median.js';
import { emitResult } from './results-file.js';

export const benchCommand: Command = {
  summary:
    "measure throughput: `bench backbone` (Kafka raw vs trajflow, and the Avro codec), `bench codec`, `bench processors`, `bench actors`, `bench sink`, `bench learner` (training FLOP/s vs the backend's matMul), `bench scale` (1, 2, 4 processor processes), `bench learning` (learning curves and the algorithm comparison), `bench supervised` (can the policy model represent FrozenLake / Sokoban at all? cross-entropy on BFS-optimal actions, held-out greedy success against examples), `bench collapse` (a real collapse reproduction: do the collapse detectors warn before the success rate falls? flags in docs/collapse-detectors.md), `bench alerts` (the collapse detectors' precision, recall and lead time over labelled healthy and collapsing runs, docs/results/alerts.md), `bench queries` (the dashboard's read endpoints over 10 million step rows in ClickHouse, target < 1 s each), `bench gateway` (latency the OpenAI-compatible gateway adds over its upstream alone, Kafka acknowledgement included; --api chat|responses|messages --rate --seconds --rounds --compare-single-instance)",
  usage:
    'trajflow bench backbone|codec|processors|actors|sink|learner|scale|learning|collapse|alerts|queries|gateway [--events N] [--rounds R] [--groups G] [--steps N] [--group-size G] [--backend auto|wasm|cpu] [--width D] [--layers L] [--tokens T] [--rows N] [--batch-rows N] [--transcode-worker] [--latency-seconds S] [--warm-up-seconds W] [--warm-up-groups W] [--runs R] [--repeat K] [--api chat|responses|messages] [--keep] [--json] [--save]\n       trajflow bench supervised --env FrozenLake|Sokoban [--examples N] [--eval-every N] [--batch B] [--lr X] [--model JSON] [--seed S] [--eval-tasks K] [--json]',
  async run(args) {
    const [what] = args;
    if (what === 'actors') return (await import('./actors.js')).runActorsBench(args);
    if (what === 'learner') return (await import('./learner.js')).runLearnerBench(args);
    if (what === 'scale') return (await import('./scale.js')).runScaleBench(args);
    if (what === 'learning') return (await import('./learning.js')).runLearningBench(args);
    if (what === 'supervised') return (await import('./supervised.js')).runSupervisedBench(args);
    if (what === 'collapse') return (await import('./collapse.js')).runCollapseBench(args);
    if (what === 'alerts') return (await import('./alerts.js')).runAlertsBench(args);
    if (what === 'queries') return (await import('./queries.js')).runQueriesBench(args);
    if (what === 'gateway') return (await import('./gateway.js')).runGatewayBench(args);
    if (what === 'sink') return benchSink(args);
    if (what !== 'backbone' && what !== 'codec' && what !== 'processors') {
      console.error(`usage: ${benchCommand.usage}`);
      return 2;
    }
    const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version };
    console.error('bench: codec on one core');
    const codec = measureCodec();
    const codecLine = `codec (one core, ${codec.eventBytes.toFixed(0)}-byte step events): encode+decode ${fmt(codec.encodeDecode.median)} events/s median, ${fmt(codec.encodeDecode.best)} best; encode ${fmt(codec.encode.median)}/s, decode ${fmt(codec.decode.median)}/s`;
    if (what === 'codec') {
      console.log(codecLine);
      emitResult(args, { bench: 'codec', machine, codec });
      return 0;
    }

    if (what === 'processors') return benchProcessors(args, machine, codec.eventBytes);

    const events = option(args, '--events', 50_000);
    const rounds = option(args, '--rounds', 3);
    const config = loadConfig();
    await ensureUp(config);
    const backbone = await connectBackbone(config, { clientId: 'trajflow-bench' });
    try {
      const results = await measureBackbone(backbone, {
        events,
        rounds,
        eventBytes: Math.round(codec.eventBytes),
        progress: (line) => console.error(`bench: ${line}`),
      });
      const raw = median(results.map((r) => r.raw));
      const trajflow = median(results.map((r) => r.trajflow));
      const ratio = median(results.map((r) => r.trajflow / r.raw));
      console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}; ${events} events × ${rounds} rounds, alternating`);
      for (const [i, r] of results.entries()) {
        console.log(`  round ${i + 1}: raw kafkajs ${fmt(r.raw)} events/s, trajflow ${fmt(r.trajflow)} events/s, ratio ${(r.trajflow / r.raw).toFixed(2)}`);
      }
      console.log(`raw kafkajs produce→consume (${Math.round(codec.eventBytes)}-byte messages): ${fmt(raw)} events/s (median)`);
      console.log(`trajflow encode→produce→Observable→decode: ${fmt(trajflow)} events/s (median)`);
      console.log(`ratio trajflow/raw: ${ratio.toFixed(2)} (median of per-round ratios; target ≥ 0.70)`);
      console.log(`${codecLine} (target ≥ 300,000)`);
      emitResult(args, { bench: 'backbone', machine, events, rounds: results, rawEventsPerSec: raw, trajflowEventsPerSec: trajflow, ratio, codec });
      return 0;
    } finally {
      await backbone.close();
      await deleteBenchTopics(backbone.kafka);
    }
  },
};

async function benchProcessors(args: string[], machine: object, eventBytes: number): Promise<number> {
  const { groups, rounds, latencySeconds, warmUpSeconds } = processorsFlags(args);
  const config = loadConfig();
  await ensureUp(config);
  const backbone = await connectBackbone(config, { clientId: 'trajflow-bench' });
  try {
    const result = await measureProcessors(backbone, {
      groups,
      eventBytes: Math.round(eventBytes),
      rounds,
      latencySeconds,
      warmUpSeconds,
      progress: (line) => console.error(`bench: ${line}`),
    });
    for (const line of [...roundLines(result), ...throughputLines(result, rounds, groups), ...latencyLines(result)]) console.log(line);
    emitResult(args, { bench: 'processors', machine, groups, ...result });
    return 0;
  } finally {
    await backbone.close();
    await deleteBenchTopics(backbone.kafka);
    await deleteProcessorsBenchTopics(config);
  }
}

async function benchSink(args: string[]): Promise<number> {
  const events = option(args, '--events', 100_000);
  const rounds = option(args, '--rounds', 3);
  // Both sides insert this many rows per request (the sink's default unless given).
  const batchRows = option(args, '--batch-rows', SINK_DEFAULTS.batchRows);
  // The sink side transcodes steps on its worker thread (trajflow sink --transcode-worker).
  const transcodeWorker = args.includes('--transcode-worker');
  const config = loadConfig();
  await ensureUp(config);
  const backbone = await connectBackbone(config, { clientId: 'trajflow-bench' });
  try {
    const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version };
    const result = await measureSink(backbone, events, rounds, (line) => console.error(`bench: ${line}`), batchRows, transcodeWorker);
    const perRound = (pick: (r: (typeof result.rounds)[number]) => number, digits = 0) => result.rounds.map((r) => (digits ? pick(r).toFixed(digits) : fmt(pick(r)))).join(' / ');
    console.log(
      `machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}; ${events} step events, ${rounds} rounds (medians; rounds in brackets); each side in a process of its own`,
    );
    console.log(`steady rates, from the first insert confirmed past ${100 * result.warmUpShare} % of the rows to the last:`);
    console.log(
      `raw ${result.format} insert of the same rows (${result.batchRows} per request, ${result.insertsInFlight} in flight): ${fmt(result.rawRowsPerSec)} rows/s (${perRound((r) => r.rawRowsPerSec)})`,
    );
    console.log(
      `sink Kafka → ClickHouse (consume, check and transcode${result.transcodeWorker ? ' on the worker thread' : ' on the main thread'}, batch, insert, ack): ${fmt(result.sinkRowsPerSec)} rows/s (${perRound((r) => r.sinkRowsPerSec)}); group join apart: ${perRound((r) => r.joinMs)} ms`,
    );
    console.log(
      `whole sides, warm-up included: raw ${fmt(result.rawWholeRowsPerSec)} rows/s (${perRound((r) => r.rawWholeRowsPerSec)}), sink ${fmt(result.sinkWholeRowsPerSec)} rows/s (${perRound((r) => r.sinkWholeRowsPerSec)}), ratio ${result.wholeRatio.toFixed(2)}`,
    );
    console.log(
      `read ceiling: a bare kafkajs consumer reading the same events (no decode, no insert): ${fmt(result.readEventsPerSec)} events/s (${perRound((r) => r.readEventsPerSec)}); sink/read ${(result.sinkRowsPerSec / result.readEventsPerSec).toFixed(2)}`,
    );
    console.log(`ratio sink/raw: ${result.ratio.toFixed(2)} (${perRound((r) => r.ratio, 2)}) (targets: ≥ 0.70 and ≥ 50,000 rows/s)`);
    console.log(`sink rows per insert: ${perRound((r) => r.sinkRowsPerInsert)} (cut at ${result.batchRows} rows or the flush interval, whichever comes first)`);
    console.log(
      `main-thread event-loop utilisation (1 = busy all the time): sink ${perRound((r) => r.sinkEventLoopUtilization, 2)}, raw ${perRound((r) => r.rawEventLoopUtilization, 2)}`,
    );
    const micros = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(1)} µs`);
    console.log(
      `CPU per row: sink process ${micros(result.sinkCpuMicrosPerRow)}, raw client ${micros(result.rawCpuMicrosPerRow)}, bare kafkajs reader ${micros(result.readCpuMicrosPerEvent)} (their clock windows); ` +
        `ClickHouse while the sink side ran ${micros(result.clickHouseMicrosPerRowSink)}, while the raw side ran ${micros(result.clickHouseMicrosPerRowRaw)} (whole side processes, merges included)`,
    );
    emitResult(args, { bench: 'sink', machine, ...result });
    return 0;
  } finally {
    await backbone.close();
  }
}
