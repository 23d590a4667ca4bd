// `trajflow bench collapse`: a real collapse reproduction for the collapse detectors (docs/results/collapse.md,
// docs/collapse-detectors.md). Two in-process training runs (learner/local/local-run.ts: the actors' episode code, the
// processors' functions and the learner's trainer, no Kafka, fully seeded) with identical seeds, tasks and
// settings except the algorithm — a configuration that collapses (vanilla GRPO, no filtering, high learning
// rate) and StarPO-S (estimator 'starpo' + the 'starpo_s_variance' filter). Every update's real events go
// through the detectors' engine with its default configuration, built by the project's own builders:
//   learner_step   learnerStepEvent(update metrics)               (learner/loop/events.ts, as the learner)
//   rollout_stats  rolloutStatsEvents(batch statistics)           (processors/pipeline, as the processors)
//   trajectory     the trajectories of the batch (one source)     (as the processors write them)
// and the bench reports per run the success and entropy curves, the iteration at which each alert was raised,
// when the success rate fell (bench/collapse-analysis.ts: rolling mean of 5 below 0.8 × its running peak and
// ≥ 0.15 below it) and the lead time = fall iteration − first alert iteration.
//   trajflow bench collapse [--env FrozenLake] [--tasks 8] [--iterations 40] [--lr 1e-2] [--optimizer '{"warmupUpdates":10}'] … [--json]
import { cpus } from 'node:os';
import { selectBackend } from '../learner/backend.js';
import { defaultFallRule, markerRow, rollingMean, sparkline } from './collapse-analysis.js';
import { collapseBenchConfig, type CollapseBenchConfig } from './collapse-flags.js';
import { runCollapseRun } from './collapse-run.js';
import type { RunReport } from './collapse-records.js';
import { emitResult } from './results-file.js';

export async function runCollapseBench(args: string[]): Promise<number> {
  const s = collapseBenchConfig(args);
  const { env, preset, tasks, iterations, seed, groups, groupSize, optimizer, model, loss, estimatorOptions, algorithms } = s;
  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  const settings = { env, envOptions: preset.envOptions, tasks, iterations, seed, groups, groupSize, optimizer, model, loss, estimatorOptions, algorithms };
  console.error(`bench collapse: ${env} ${JSON.stringify(preset.envOptions)}, ${tasks} fixed tasks, ${iterations} iterations, seed ${seed}, ${backend.description}`);
  console.error(`  ${groups} groups × ${groupSize}, optimizer ${JSON.stringify(optimizer)}, model ${JSON.stringify(model)}, loss ${JSON.stringify(loss)}`);
  const reports: RunReport[] = [];
  for (const label of s.runs) reports.push(await runCollapseRun(s, label, backend.name));
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ${machine.backend}`);
  for (const line of headerLines(s)) console.log(line);
  for (const report of reports) printReport(report);
  emitResult(args, { bench: 'collapse', machine, settings, fallRule: defaultFallRule, runs: reports });
  return 0;
}

/** The settings and the fall rule, above the runs' reports. */
export function headerLines(s: CollapseBenchConfig): string[] {
  const { optimizer } = s;
  return [
    `${s.env}, ${s.tasks} fixed training tasks, ${s.groups} groups × ${s.groupSize}, lr ${optimizer.learningRate} (warm-up ${optimizer.warmupUpdates} updates), ${optimizer.epochs} epochs × ${optimizer.minibatches} minibatches, seed ${s.seed}; detectors: default configuration`,
    `"fell": first iteration whose rolling mean (${defaultFallRule.window}) of train success is < ${defaultFallRule.ratio} × its running peak and ≥ ${defaultFallRule.minDrop} below it; lead = fall − first alert`,
  ];
}

function printReport(report: RunReport): void {
  const { iterations: records, fall, lead } = report;
  const success = records.map((r) => r.trainSuccess);
  const entropy = records.map((r) => r.entropy ?? Number.NaN);
  const maxEntropy = Math.max(...entropy.filter(Number.isFinite), 1e-9);
  const alertIterations = [...new Set(report.alerts.map((a) => a.iteration))];
  console.log(
    `\n${report.label}: ${report.algorithm}, ${records.length} iterations, ${report.seconds.toFixed(0)} s, held-out greedy success at the end ${report.heldOutGreedy?.toFixed(3) ?? '-'}`,
  );
  console.log(`  iteration      ${records.map((r) => String(r.iteration % 10)).join('')}`);
  console.log(`  success 0–1    ${sparkline(success, 0, 1)}`);
  console.log(`  rolling (${defaultFallRule.window})    ${sparkline(rollingMean(success, defaultFallRule.window), 0, 1)}`);
  console.log(`  entropy 0–${maxEntropy.toFixed(2)} ${sparkline(entropy, 0, maxEntropy)}`);
  console.log(`  alerts (!) fall (^) ${markerRow(records.length, alertIterations, fall?.fallIndex ?? null)}`);
  console.log(`  success by iteration: ${success.map((s) => s.toFixed(2)).join(' ')}`);
  console.log(`  entropy by iteration: ${entropy.map((e) => (Number.isFinite(e) ? e.toFixed(2) : '-')).join(' ')}`);
  const mi = records.filter((r) => r.templateMi !== null).map((r) => `${r.iteration}:${r.templateMi!.toFixed(3)}`);
  if (mi.length > 0) console.log(`  cross-scoring Î/log N (iteration:value): ${mi.join(' ')}`);
  if (report.alerts.length === 0) console.log('  alerts: none');
  for (const a of report.alerts) console.log(`  alert at iteration ${a.iteration}: ${a.kind} (${a.severity}; detector point ${a.at}) — ${a.message}`);
  if (fall)
    console.log(`  success peaked at iteration ${fall.peakIndex} (rolling ${fall.peak.toFixed(3)}) and fell at iteration ${fall.fallIndex} (rolling ${fall.value.toFixed(3)})`);
  else console.log('  success did not fall');
  if (lead.leadIterations !== null) {
    console.log(
      `  lead time: ${lead.leadIterations} iterations (first alert ${lead.firstAlert!.kind} at ${lead.firstAlert!.iteration}; ${lead.alertsBeforePeak} alert(s) at or before the peak, ${lead.alertsBeforeFall} before the fall)`,
    );
  }
}
