// One side of `bench sink` in a process of its own (bench/sink.ts spawns it per side and round): the sink
// runs as its own process in a deployment, so its garbage collector must not trace the benchmark's arrays of
// rows (what tracing them cost: docs/results/sink.md). Argument: one JSON object (SideRequest). Last stdout
// line: a SideResult.
import { connectBackbone } from '../streams/index.js';
import type { TrajflowConfig } from '../core/config.js';
import { benchRows, rawRound, readRound, sinkRound, type SideRates } from './sink-rounds.js';

export interface SideRequest {
  readonly side: 'raw' | 'sink' | 'read';
  readonly config: TrajflowConfig;
  readonly events: number;
  /** Rows per insert, the same on the raw and the sink side. */
  readonly batchRows: number;
  /** The sink side: steps transcoded on its worker thread. */
  readonly transcodeWorker: boolean;
}

export interface SideResult extends SideRates {
  /** startSink → group joined (the sink side; 0 for the others). */
  readonly joinMs: number;
  /** The sink side's mean rows per insert (the raw side's are batchRows; 0 for the others). */
  readonly rowsPerInsert: number;
}

async function run(request: SideRequest): Promise<SideResult> {
  if (request.side === 'raw') return { ...(await rawRound(request.config, benchRows(request.events), request.batchRows)), joinMs: 0, rowsPerInsert: request.batchRows };
  const backbone = await connectBackbone(request.config, { clientId: `bench-sink-${request.side}` });
  try {
    if (request.side === 'read') {
      const { perSecond, cpuMicrosPerEvent } = await readRound(backbone, request.config, request.events);
      return { whole: perSecond, steady: perSecond, cpuMicrosPerRow: cpuMicrosPerEvent, eventLoopUtilization: 0, joinMs: 0, rowsPerInsert: 0 };
    }
    return await sinkRound(backbone, request.config, request.events, request.batchRows, request.transcodeWorker);
  } finally {
    await backbone.close();
  }
}

const result = await run(JSON.parse(process.argv[2]!) as SideRequest);
console.log(JSON.stringify(result));
process.exit(0);
