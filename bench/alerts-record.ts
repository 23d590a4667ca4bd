// A recording of `bench alerts`' runs: every detector input of every run (its Avro bytes, base64) and every
// iteration's train success, one JSON line each, so `--replay` can score changed detectors on the same runs
// without training them again.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { buildDetectorsConfig } from '../detectors/config.js';
import { CollapseEngine, type DetectorInput } from '../detectors/engine.js';
import { EventCodec, SchemaRegistry } from '../schemas/index.js';
import type { ScoredAlert, ScoredRun } from './alerts-score.js';

type RecordLine =
  | { readonly run: string; readonly iteration: number; readonly input: string; readonly source?: string }
  | { readonly run: string; readonly iteration: number; readonly trainSuccess: number };

export class AlertsRecording {
  private readonly codec = new EventCodec(SchemaRegistry.fromSchemasDir(), { maxEventBytes: 16 * 1024 * 1024 });

  constructor(private readonly path: string) {
    writeFileSync(path, '');
  }

  input(run: string, iteration: number, input: DetectorInput): void {
    const payload = this.codec.encode(input.type, input.event as never).toString('base64');
    this.write({ run, iteration, input: payload, ...(input.type === 'trajectory' ? { source: input.source } : {}) });
  }

  success(run: string, iteration: number, trainSuccess: number): void {
    this.write({ run, iteration, trainSuccess });
  }

  private write(line: RecordLine): void {
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
  }
}

/** The recorded runs, each scored again by today's detectors (default configuration), in recorded order. */
export function replayRecording(path: string): ScoredRun[] {
  // Decoded without the live checks: the in-process loop's events carry its clock-free times (0).
  const codec = new EventCodec(SchemaRegistry.fromSchemasDir(), { maxEventBytes: 16 * 1024 * 1024 });
  const runs = new Map<string, { engine: CollapseEngine; success: number[]; alerts: ScoredAlert[]; last: number }>();
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text === '') continue;
    const line = JSON.parse(text) as RecordLine;
    let run = runs.get(line.run);
    if (!run) runs.set(line.run, (run = { engine: new CollapseEngine(buildDetectorsConfig()), success: [], alerts: [], last: 0 }));
    run.last = line.iteration;
    if ('trainSuccess' in line) {
      run.success[line.iteration] = line.trainSuccess;
      continue;
    }
    const decoded = codec.decodeAny(Buffer.from(line.input, 'base64'));
    const input = (
      decoded.event === 'trajectory' ? { type: 'trajectory', event: decoded.value, source: line.source ?? 'local' } : { type: decoded.event, event: decoded.value }
    ) as DetectorInput;
    for (const r of run.engine.observe(input)) run.alerts.push({ iteration: line.iteration, kind: r.alert.kind, severity: r.alert.severity });
  }
  return [...runs].map(([name, run]) => {
    for (const r of run.engine.flush()) run.alerts.push({ iteration: run.last, kind: r.alert.kind, severity: r.alert.severity });
    return { name, trainSuccess: run.success, alerts: run.alerts };
  });
}
