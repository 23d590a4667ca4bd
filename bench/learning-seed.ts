// One (algorithm, seed) run of `trajflow bench learning`: the in-process loop trained until it used the env-step
// budget, its held-out curve, and (with --diagnose) the diagnosis at the evaluations.
import { runLocal, type CurvePoint, type LocalRunConfig } from '../learner/local/local-run.js';
import { replyVocabulary } from '../learner/policy/reply.js';
import { trajflowTokenizer } from '../tokenizer/index.js';
import { createEnv, type EnvName } from '../envs/registry.js';
import { diagnosisLine, diagnosisRecorder, type IterationDiagnosis } from './learning-diagnostics.js';
import { ALGORITHMS } from './learning-algorithms.js';
import type { LearningBenchConfig } from './learning-flags.js';
import type { seedToTarget } from './learning-summary.js';

export interface SeedCurvePoint {
  readonly envSteps: number;
  readonly seconds: number;
  readonly greedy: number;
  readonly sampled?: number;
  readonly entropy?: number;
  readonly ppoKl?: number;
}

export interface SeedResult {
  readonly algorithm: string;
  readonly seed: number;
  readonly final: number;
  readonly untrained: number;
  readonly curve: SeedCurvePoint[];
  readonly toTarget?: ReturnType<typeof seedToTarget>;
  readonly seconds: number;
  readonly diagnosis?: IterationDiagnosis[];
}

type Recorder = ReturnType<typeof diagnosisRecorder>;

/** The reply token ids of the env's action words (what a diagnosis counts as action tokens). */
function actionTokenIds(env: EnvName, envOptions: Record<string, unknown>): Set<number> {
  return new Set(replyVocabulary(trajflowTokenizer(), createEnv(env, envOptions).actionVocabulary).tokenIds.slice(1));
}

/** The loop's configuration for one run: enough iterations to pass the budget, stopped by `shouldStop` at the first past it. */
export function seedRunConfig(s: LearningBenchConfig, algorithm: string, seed: number, shouldStop: () => boolean, recorder?: Recorder): LocalRunConfig {
  const chosen = ALGORITHMS[algorithm]!;
  return {
    env: s.env,
    envOptions: s.envOptions,
    iterations: 100_000,
    groups: s.groups,
    groupSize: s.groupSize,
    seed,
    evalEvery: s.evalEvery,
    evalTasks: s.evalTasks,
    evalSamples: s.evalSamples,
    processing: {
      reward: { terms: [{ kind: 'env_return' }] },
      ...chosen,
      estimator: { ...chosen.estimator, options: { ...(algorithm === s.preset.estimator ? s.preset.estimatorOptions : {}), ...s.estimatorOptions } },
    },
    optimizer: s.optimizer,
    model: s.model,
    loss: s.loss,
    evalAtStart: true,
    shouldStop,
    ...(recorder ? { onBatch: recorder.onBatch, onUpdated: recorder.onUpdated, observeGradients: recorder.observeGradients } : {}),
  };
}

/** The progress line of an evaluation. */
export function evaluationLine(algorithm: string, seed: number, point: CurvePoint, seconds: number, evalSamples: number): string {
  const evaluation = point.eval!;
  return `  ${algorithm} seed ${seed}: ${point.envSteps} env steps, ${seconds.toFixed(0)} s, train success ${point.trainSuccess.toFixed(3)}, entropy ${point.update?.entropy.toFixed(3) ?? '-'}, greedy held-out ${evaluation.greedySuccess.toFixed(3)}${evalSamples > 0 ? `, sampled pass@1 ${evaluation.passAtK['pass@1']!.toFixed(3)}` : ''}`;
}

/** A run's result from its curve points and the wall seconds at each evaluation. */
export function seedResult(
  run: { readonly algorithm: string; readonly seed: number; readonly evalSamples: number; readonly evalEvery: number },
  curve: readonly CurvePoint[],
  evalSeconds: readonly number[],
  seconds: number,
  diagnoses?: readonly IterationDiagnosis[],
): SeedResult {
  const evals = curve.filter((p) => p.eval);
  return {
    algorithm: run.algorithm,
    seed: run.seed,
    untrained: curve.find((p) => p.iteration === -1)?.eval?.greedySuccess ?? Number.NaN,
    final: evals.at(-1)?.eval?.greedySuccess ?? Number.NaN,
    curve: evals.map((p, i) => ({
      envSteps: p.envSteps,
      seconds: evalSeconds[i]!,
      greedy: p.eval!.greedySuccess,
      ...(run.evalSamples > 0 ? { sampled: p.eval!.passAtK['pass@1']! } : {}),
      ...(p.update ? { entropy: p.update.entropy, ppoKl: p.update.ppoKl } : {}),
    })),
    seconds,
    // The diagnosis at the evaluations only: every iteration's would make the saved file several times larger.
    ...(diagnoses ? { diagnosis: diagnoses.filter((d) => (d.iteration + 1) % run.evalEvery === 0) } : {}),
  };
}

/** Trains one (algorithm, seed) until it has used the config's env steps, logging each evaluation to stderr. */
export async function runLearningSeed(s: LearningBenchConfig, algorithm: string, seed: number): Promise<SeedResult> {
  const started = Date.now();
  const curve: CurvePoint[] = [];
  const evalSeconds: number[] = [];
  const stop = new AbortController();
  const recorder = s.diagnose ? diagnosisRecorder(s.env, s.envOptions, actionTokenIds(s.env, s.envOptions)) : undefined;
  await runLocal(
    seedRunConfig(s, algorithm, seed, () => stop.signal.aborted, recorder),
    (point) => {
      curve.push(point);
      if (point.eval) evalSeconds.push((Date.now() - started) / 1000);
      if (point.eval) console.error(evaluationLine(algorithm, seed, point, (Date.now() - started) / 1000, s.evalSamples));
      if (point.eval && recorder) console.error(`    ${diagnosisLine(recorder.records.at(-1))}`);
      if (point.envSteps >= s.envSteps) stop.abort();
    },
  );
  return seedResult({ algorithm, seed, evalSamples: s.evalSamples, evalEvery: s.evalEvery }, curve, evalSeconds, (Date.now() - started) / 1000, recorder?.records);
}
