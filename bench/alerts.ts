// `trajflow bench alerts`: are the collapse detectors worth reading? Runs the labelled scenarios
// (alerts-scenarios.ts) in process under the detectors' default configuration, labels each by its success curve,
// and prints per detector and overall the precision, the recall and the lead time (alerts-score.ts), and whether
// every healthy run stayed quiet (docs/results/alerts.md).
//   trajflow bench alerts [--scenarios a,b] [--record FILE] [--replay FILE] [--json] [--save]
import { cpus } from 'node:os';
import type { DetectorInput } from '../detectors/engine.js';
import { parseFlagPairs } from '../infra/cli/flags.js';
import { selectBackend } from '../learner/backend.js';
import { AlertsRecording, replayRecording } from './alerts-record.js';
import { DEFAULT_SCENARIOS, pickScenarios, type AlertScenario } from './alerts-scenarios.js';
import { SCORING, scoreAlerts, type AlertsScore, type ScoredRun } from './alerts-score.js';
import { scoreStaging, type StagingScore } from './alerts-staging.js';
import { defaultFallRule } from './collapse-analysis.js';
import { iterationLine, type IterationRecord } from './collapse-records.js';
import { runWithDetectors } from './detector-run.js';
import { emitResult } from './results-file.js';

const USAGE = `trajflow bench alerts [--scenarios ${DEFAULT_SCENARIOS.join(',')}] [--record FILE] [--replay FILE] [--json] [--save]`;

export async function runAlertsBench(args: string[]): Promise<number> {
  const f = parseFlagPairs(
    args.slice(1).filter((a) => a !== '--json' && a !== '--save'),
    ['--scenarios', '--record', '--replay'] as const,
    USAGE,
  );
  const scenarios = pickScenarios(f['--scenarios']?.split(',') ?? DEFAULT_SCENARIOS);
  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  const scored = f['--replay']
    ? f['--replay']
        .split(',')
        .flatMap(replayRecording)
        .filter((r) => scenarios.some((s) => s.name === r.name))
    : await trainAll(scenarios, backend.name, f['--record']);
  const runs = scored.map((r) => withOnset(r, scenarios));
  const score = scoreAlerts(runs);
  const staging = scoreStaging(runs);
  printScore(score, runs);
  printStaging(staging);
  emitResult(args, {
    bench: 'alerts',
    machine,
    fallRule: defaultFallRule,
    scoring: SCORING,
    scenarios: scenarios.map(({ name, staged, description }) => ({ name, staged, description })),
    score,
    staging,
    runs,
  });
  return 0;
}

async function trainAll(scenarios: readonly AlertScenario[], backend: string, recordPath: string | undefined): Promise<ScoredRun[]> {
  const recording = recordPath ? new AlertsRecording(recordPath) : null;
  const runs: ScoredRun[] = [];
  for (const scenario of scenarios) {
    const started = Date.now();
    console.error(`bench alerts: ${scenario.name} — ${scenario.description}`);
    const observers = {
      onRecord: (r: IterationRecord) => {
        recording?.success(scenario.name, r.iteration, r.trainSuccess);
        console.error(iterationLine(scenario.name, scenario.staged, r, (Date.now() - started) / 1000));
      },
      onInput: recording ? (iteration: number, input: DetectorInput) => recording.input(scenario.name, iteration, input) : undefined,
    };
    const watched = await runWithDetectors(scenario.config, `bench-alerts-${scenario.name}`, backend, observers);
    runs.push({
      name: scenario.name,
      trainSuccess: watched.records.map((r) => r.trainSuccess),
      alerts: watched.alerts.map((a) => ({ iteration: a.iteration, kind: a.kind, severity: a.severity })),
    });
  }
  return runs;
}

function withOnset(run: ScoredRun, scenarios: readonly AlertScenario[]): ScoredRun {
  const onset = scenarios.find((s) => s.name === run.name)?.onset;
  return onset === undefined ? run : { ...run, onset };
}

const fixed = (v: number | null, digits = 2) => (v === null ? '-' : v.toFixed(digits));

function printScore(score: AlertsScore, runs: readonly ScoredRun[]): void {
  console.log(
    `runs (fell: rolling ${defaultFallRule.window} < ${defaultFallRule.ratio} × peak and ≥ ${defaultFallRule.minDrop} below; right alert: ≤ ${SCORING.horizon} updates before the fall or while the run is down, catching it: ≤ ${SCORING.after} after; a fall must stay ${SCORING.sustain} updates)`,
  );
  score.runs.forEach((v, i) => {
    const alerts = runs[i]!.alerts.map((a) => `${a.kind}@${a.iteration}${a.severity === 'critical' ? '!' : ''}`).join(' ') || 'none';
    const label = v.fell
      ? `fell at ${v.fall!.fallIndex} (peak ${v.fall!.peak.toFixed(2)} at ${v.fall!.peakIndex}), lead ${v.lead ?? '-'}${v.reach !== null ? ` (fault at ${runs[i]!.onset}: caught ${v.delay ?? '-'} after it, fell ${v.reach} after it)` : ''}`
      : `healthy, ${v.healthyPass ? 'quiet' : 'NOT quiet'}`;
    console.log(`  ${v.name}: ${label}; ${v.criticals} critical, ${v.warnings} warning; alerts ${alerts}`);
  });
  console.log('detector                    alerts  precision  recall  early recall  median lead');
  for (const d of [...score.detectors, score.overall]) {
    console.log(
      `  ${d.kind.padEnd(26)}${String(d.alerts).padStart(6)}  ${fixed(d.precision).padStart(9)}  ${fixed(d.recall).padStart(6)}  ${fixed(d.earlyRecall).padStart(12)}  ${fixed(d.medianLead, 1).padStart(11)}`,
    );
  }
  console.log(
    `staged faults that fell, caught: median ${fixed(score.medianDelay, 1)} updates from the fault to the first alert, ${fixed(score.medianReach, 1)} from the fault to the fall`,
  );
  console.log(`healthy runs quiet (no critical, ≤ ${SCORING.healthyMaxWarnings} warning): ${score.healthyPassing} / ${score.healthyRuns}`);
}

function printStaging(s: StagingScore): void {
  console.log(
    `labelled by what they staged instead (a fault is there from its onset, fallen or not): ${s.alerts} alerts, precision ${fixed(s.precision)}; ` +
      `${s.faults} faults, recall ${fixed(s.recall)}, median ${fixed(s.medianDelay, 1)} updates from the onset to the first alert; ` +
      `runs without a fault quiet: ${s.unfaultedQuiet} / ${s.unfaultedRuns}`,
  );
}
