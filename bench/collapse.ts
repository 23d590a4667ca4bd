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
import { ConfigError } from '../core/errors.js';
import { TRAIN_PRESETS } from '../cli/train/presets.js';
import { parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import { runOverrides } from './run-overrides.js';
import { selectBackend } from '../learner/backend.js';
import { runLocal, type CurvePoint } from '../learner/local/local-run.js';
import { learnerStepEvent } from '../learner/loop/events.js';
import { templateMetricsEntries } from '../learner/collapse/index.js';
import { rolloutStatsEvents } from '../processors/pipeline/rollout-stats-events.js';
import { buildDetectorsConfig } from '../detectors/config.js';
import { CollapseEngine, type DetectorInput, type RaisedAlert } from '../detectors/engine.js';
import type { EnvName } from '../envs/registry.js';
import { ALGORITHMS } from './learning.js';
import { defaultFallRule, findFall, leadTime, markerRow, rollingMean, sparkline, type AlertMark, type Fall, type LeadTime } from './collapse-analysis.js';
import { emitResult } from './results-file.js';

/**
 * The defaults: the configuration measured in docs/results/collapse.md — FrozenLake with 8 fixed maps, lr 1e-2 (10× the
 * preset's) reached by a linear warm-up over the first 10 updates (so the run learns before the high rate
 * bites, and the detectors' early levels are measured first), 4 epochs × 4 minibatches.
 */
export const COLLAPSE_DEFAULTS = Object.freeze({
  env: 'FrozenLake' as EnvName,
  tasks: 8,
  iterations: 40,
  seed: 1,
  groups: 8,
  groupSize: 8,
  learningRate: 1e-2,
  warmupUpdates: 10,
  epochs: 4,
  minibatches: 4,
  collapse: 'grpo',
  stable: 'starpo-s',
  /**
   * The preset's grid policy without the neighbour stem: with the stem, GRPO does not collapse within the
   * bench's iterations (docs/results/collapse.md), so the default keeps the configuration its curves come from.
   */
  model: Object.freeze({ gridNeighbours: false }),
  /**
   * RAGEN-2 cross-scoring before every 2nd update (the learner's default is every 10th): the
   * template_collapse_mi detector compares its 2 newest measurements with its first 3, so at every 10th it
   * would not be armed before update 50 of a 40-iteration run.
   */
  templateEvery: 2,
  templatePairs: 16,
});

const FLAGS = [
  '--env',
  '--tasks',
  '--iterations',
  '--seed',
  '--groups',
  '--group-size',
  '--lr',
  '--epochs',
  '--minibatches',
  '--collapse',
  '--stable',
  '--runs',
  '--template-every',
  '--model',
  '--optimizer',
  '--loss',
  '--estimator-options',
  '--json',
] as const;
const D = COLLAPSE_DEFAULTS;
export const COLLAPSE_USAGE =
  `trajflow bench collapse [--env ${D.env}] [--tasks ${D.tasks}] [--iterations ${D.iterations}] [--seed ${D.seed}] [--groups ${D.groups}] [--group-size ${D.groupSize}] [--lr ${D.learningRate}] ` +
  `[--epochs ${D.epochs}] [--minibatches ${D.minibatches}] [--collapse ${D.collapse}] [--stable ${D.stable}] [--runs collapse,stable] [--template-every ${D.templateEvery} (0: off)] ` +
  `[--model '{"width":64}'] [--optimizer '{"warmupUpdates":${D.warmupUpdates}}'] [--loss '{"entropyCoeff":0}'] [--estimator-options '{}'] [--json]`;

export interface IterationRecord {
  readonly iteration: number;
  readonly envSteps: number;
  readonly trainSuccess: number;
  readonly trainReward: number;
  /** Groups kept by the filters / all groups of the batch. */
  readonly keptGroups: number;
  readonly groups: number;
  readonly meanInGroupRewardStd: number;
  readonly entropy: number | null;
  readonly gradNorm: number | null;
  readonly ppoKl: number | null;
  /** RAGEN-2's Î(X;Z) / log N measured before this iteration's update (null when not measured). */
  readonly templateMi: number | null;
  /** Kinds of the alerts raised while this iteration's events were fed. */
  readonly alerts: string[];
}

export interface RunReport {
  readonly label: 'collapse' | 'stable';
  readonly algorithm: string;
  readonly iterations: IterationRecord[];
  readonly alerts: (AlertMark & { readonly at: number; readonly severity: string; readonly message: string })[];
  readonly fall: Fall | null;
  readonly lead: LeadTime;
  readonly heldOutGreedy: number | null;
  readonly seconds: number;
}

export async function runCollapseBench(args: string[]): Promise<number> {
  const f = parseFlagPairs(
    args.slice(1).filter((a) => a !== '--json' && a !== '--save'),
    FLAGS,
    COLLAPSE_USAGE,
  );
  const env = (f['--env'] ?? D.env) as EnvName;
  const preset = TRAIN_PRESETS[env];
  if (!preset) throw new ConfigError(`--env ${env}: choose one of ${Object.keys(TRAIN_PRESETS).join(', ')}`);
  const algorithmOf = (flag: '--collapse' | '--stable', fallback: string) => {
    const name = f[flag] ?? fallback;
    if (!ALGORITHMS[name]) throw new ConfigError(`${flag}: unknown '${name}'; use ${Object.keys(ALGORITHMS).join(', ')}`);
    return name;
  };
  const algorithms = { collapse: algorithmOf('--collapse', D.collapse), stable: algorithmOf('--stable', D.stable) };
  const runs = (f['--runs'] ?? 'collapse,stable').split(',');
  for (const r of runs) if (r !== 'collapse' && r !== 'stable') throw new ConfigError(`--runs: unknown '${r}'; use collapse, stable or both: collapse,stable`);
  const tasks = positiveInt('tasks', f['--tasks'], D.tasks);
  const iterations = positiveInt('iterations', f['--iterations'], D.iterations);
  const seed = positiveInt('seed', f['--seed'], D.seed);
  const templateEvery = f['--template-every'] === '0' ? 0 : positiveInt('template-every', f['--template-every'], D.templateEvery);
  const groups = positiveInt('groups', f['--groups'], D.groups);
  const groupSize = positiveInt('group-size', f['--group-size'], D.groupSize);
  const { optimizer, model, loss, estimatorOptions } = runOverrides(f, preset, D);
  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  const settings = { env, envOptions: preset.envOptions, tasks, iterations, seed, groups, groupSize, optimizer, model, loss, estimatorOptions, algorithms };
  console.error(`bench collapse: ${env} ${JSON.stringify(preset.envOptions)}, ${tasks} fixed tasks, ${iterations} iterations, seed ${seed}, ${backend.description}`);
  console.error(`  ${groups} groups × ${groupSize}, optimizer ${JSON.stringify(optimizer)}, model ${JSON.stringify(model)}, loss ${JSON.stringify(loss)}`);

  const reports: RunReport[] = [];
  for (const label of runs as ('collapse' | 'stable')[]) {
    const algorithm = algorithms[label];
    const started = Date.now();
    const runId = `bench-collapse-${label}-${algorithm}-${seed}`;
    const engine = new CollapseEngine(buildDetectorsConfig());
    const records: IterationRecord[] = [];
    const alerts: RunReport['alerts'] = [];
    // The iteration whose events are being fed, and the batch statistics of the current iteration.
    let batchInfo: { kept: number; groups: number; inGroupStd: number; raised: RaisedAlert[] } = { kept: 0, groups: 0, inGroupStd: Number.NaN, raised: [] };
    const feed = (iteration: number, input: DetectorInput): RaisedAlert[] => {
      const raised = engine.observe(input);
      for (const r of raised) alerts.push({ iteration, kind: r.alert.kind, at: r.alert.at, severity: r.alert.severity, message: r.alert.message });
      return raised;
    };
    // Deterministic event times (the loop has no clock): rollout events of iteration i at i·1000 + 100, its
    // learner step at i·1000 + 500, so a rollout alert is attributed to the previous update, as live.
    const curve = await runLocal(
      {
        env,
        envOptions: preset.envOptions,
        iterations,
        groups,
        groupSize,
        seed,
        tasks,
        evalEvery: iterations,
        evalTasks: 32,
        processing: {
          reward: { terms: [{ kind: 'env_return' }] },
          ...ALGORITHMS[algorithm]!,
          estimator: { ...ALGORITHMS[algorithm]!.estimator, options: estimatorOptions },
        },
        optimizer,
        model,
        loss,
        ...(templateEvery > 0 ? { templateCollapse: { every: templateEvery, pairs: D.templatePairs, turns: 'uniform' as const } } : {}),
        onBatch: (iteration, rawGroups, output) => {
          const raised: RaisedAlert[] = [];
          for (const group of rawGroups) {
            for (const trajectory of group.trajectories) raised.push(...feed(iteration, { type: 'trajectory', event: trajectory, source: 'local' }));
          }
          for (const event of rolloutStatsEvents(
            runId,
            rawGroups.map((g) => g.groupId),
            output.stats,
            iteration * 1000 + 100,
          )) {
            raised.push(...feed(iteration, { type: 'rollout_stats', event }));
          }
          batchInfo = { kept: output.keptGroupIds.length, groups: rawGroups.length, inGroupStd: output.stats.meanInGroupRewardStd, raised };
        },
      },
      (point: CurvePoint) => {
        if (point.iteration < 0 || records.some((r) => r.iteration === point.iteration)) return;
        const raised = [...batchInfo.raised];
        const update = point.update;
        if (update) {
          const step = learnerStepEvent(
            runId,
            point.iteration,
            point.iteration,
            update,
            { stalenessMean: 0, stalenessMax: 0, droppedStale: 0, duplicates: 0, otherRuns: 0, skippedSamples: 0, replaySamples: 0 },
            backend.name,
            point.iteration * 1000 + 500,
            point.template ? templateMetricsEntries(point.template) : {},
          );
          raised.push(...feed(point.iteration, { type: 'learner_step', event: step }));
        }
        const record: IterationRecord = {
          iteration: point.iteration,
          envSteps: point.envSteps,
          trainSuccess: point.trainSuccess,
          trainReward: point.trainReward,
          keptGroups: batchInfo.kept,
          groups: batchInfo.groups,
          meanInGroupRewardStd: batchInfo.inGroupStd,
          entropy: update?.entropy ?? null,
          gradNorm: update?.gradNorm ?? null,
          ppoKl: update?.ppoKl ?? null,
          templateMi: point.template ? point.template.mutualInformation / point.template.miUpperBound : null,
          alerts: raised.map((r) => r.alert.kind),
        };
        records.push(record);
        console.error(
          `  ${label} (${algorithm}) it ${String(point.iteration).padStart(3)}: ${point.envSteps} env steps, ${((Date.now() - started) / 1000).toFixed(0)} s, success ${point.trainSuccess.toFixed(3)}, ` +
            `in-group std ${batchInfo.inGroupStd.toFixed(3)}, kept ${batchInfo.kept}/${batchInfo.groups}, entropy ${update?.entropy.toFixed(3) ?? '-'}, grad ${update?.gradNorm.toFixed(2) ?? '-'}, ppo-kl ${update?.ppoKl.toFixed(3) ?? '-'}` +
            (record.templateMi !== null ? `, MI/logN ${record.templateMi.toFixed(3)}` : '') +
            (record.alerts.length ? `  ALERT ${record.alerts.join(', ')}` : ''),
        );
      },
    );
    // Trajectory windows still open at the end of the run (scored by flush), attributed to the last iteration.
    for (const r of engine.flush())
      alerts.push({ iteration: iterations - 1, kind: r.alert.kind, at: r.alert.at, severity: r.alert.severity, message: `${r.alert.message} (at the end of the run)` });
    const fall = findFall(
      records.map((r) => r.trainSuccess),
      defaultFallRule,
    );
    reports.push({
      label,
      algorithm,
      iterations: records,
      alerts,
      fall,
      lead: leadTime(alerts, fall),
      heldOutGreedy: curve.at(-1)?.eval?.greedySuccess ?? null,
      seconds: (Date.now() - started) / 1000,
    });
  }

  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ${machine.backend}`);
  console.log(
    `${env}, ${tasks} fixed training tasks, ${groups} groups × ${groupSize}, lr ${optimizer.learningRate} (warm-up ${optimizer.warmupUpdates} updates), ${optimizer.epochs} epochs × ${optimizer.minibatches} minibatches, seed ${seed}; detectors: default configuration`,
  );
  console.log(
    `"fell": first iteration whose rolling mean (${defaultFallRule.window}) of train success is < ${defaultFallRule.ratio} × its running peak and ≥ ${defaultFallRule.minDrop} below it; lead = fall − first alert`,
  );
  for (const report of reports) printReport(report);
  emitResult(args, { bench: 'collapse', machine, settings, fallRule: defaultFallRule, runs: reports });
  return 0;
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
