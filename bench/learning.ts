// `trajflow bench learning`: the learning curves and the algorithm comparison of docs/results/learning.md, measured with
// the in-process loop (learner/local/local-run.ts: the same actors' episode code, processors' functions and
// learner trainer as the streaming system, without Kafka, fully seeded).
//   trajflow bench learning --env FrozenLake --algorithms grpo,gigpo,starpo-s --seeds 1,2,3 --env-steps 30000 [--json]
// Each (algorithm, seed) trains until it has used --env-steps environment steps; the table gives mean ± std
// of held-out greedy success at the end, next to the untrained policy and the random baseline.
import { cpus } from 'node:os';
import { ConfigError } from '../core/errors.js';
import { baselineSuccessRate } from '../envs/random-policy.js';
import { EVAL_SEEDS } from '../envs/seeds.js';
import { TRAIN_PRESETS } from '../cli/train/presets.js';
import { jsonObjectFlag, parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import { runOverrides } from './run-overrides.js';
import { selectBackend } from '../learner/backend.js';
import { runLocal, type CurvePoint } from '../learner/local/local-run.js';
import type { ProcessingConfig } from '../processors/pipeline/process-batch.js';
import type { EnvName } from '../envs/registry.js';
import { emitResult } from './results-file.js';
import { seedsToTarget, seedToTarget } from './learning-summary.js';
import { TRAIN_EXPECTATIONS } from '../cli/train/expectations.js';
import { diagnosisLine, diagnosisRecorder, type IterationDiagnosis } from './learning-diagnostics.js';
import { replyVocabulary } from '../learner/policy/reply.js';
import { trajflowTokenizer } from '../tokenizer/index.js';
import { createEnv } from '../envs/registry.js';

/** The reply token ids of the env's action words (what a diagnosis counts as action tokens). */
function actionTokenIds(env: EnvName, envOptions: Record<string, unknown>): Set<number> {
  return new Set(replyVocabulary(trajflowTokenizer(), createEnv(env, envOptions).actionVocabulary).tokenIds.slice(1));
}

/** The algorithms of the comparison: estimator plus filters. */
export const ALGORITHMS: Record<string, Pick<ProcessingConfig, 'estimator' | 'filters'>> = {
  grpo: { estimator: { name: 'grpo' }, filters: [] },
  'dr-grpo': { estimator: { name: 'dr_grpo' }, filters: [] },
  gigpo: { estimator: { name: 'gigpo' }, filters: [] },
  'starpo-s': { estimator: { name: 'starpo' }, filters: [{ name: 'starpo_s_variance' }] },
};

const FLAGS = [
  '--path',
  '--env',
  '--algorithms',
  '--seeds',
  '--env-steps',
  '--groups',
  '--group-size',
  '--lr',
  '--epochs',
  '--minibatches',
  '--eval-tasks',
  '--eval-every',
  '--eval-samples',
  '--model',
  '--optimizer',
  '--loss',
  '--estimator-options',
  '--env-options',
  '--json',
  '--diagnose',
] as const;
const USAGE =
  'trajflow bench learning [--path in-process|real] [--env FrozenLake] [--algorithms grpo,gigpo,starpo-s] [--seeds 1,2,3] [--env-steps 30000] [--groups 8] [--group-size 8] [--lr 1e-3] [--epochs 4] [--minibatches 4] [--eval-tasks 100] [--eval-every 10] [--eval-samples 0] ' +
  '[--model \'{"width":64}\'] [--optimizer \'{"warmupUpdates":5}\'] [--loss \'{"entropyCoeff":0.01}\'] [--estimator-options \'{"gamma":0.9}\'] [--env-options \'{"distanceShaping":1}\'] [--json]';

/** A flag holding a JSON object (fields override the preset's). */
export async function runLearningBench(args: string[]): Promise<number> {
  const path = args[args.indexOf('--path') + 1];
  if (args.includes('--path') && path !== 'in-process') {
    if (path !== 'real') throw new ConfigError(`--path must be real or in-process, got ${path ?? 'nothing'}`);
    return (await import('./learning-real.js')).runRealPathBench(args);
  }
  const f = parseFlagPairs(
    args.slice(1).filter((a) => a !== '--json' && a !== '--save' && a !== '--diagnose'),
    FLAGS,
    USAGE,
  );
  const env = (f['--env'] ?? 'FrozenLake') as EnvName;
  const preset = TRAIN_PRESETS[env];
  if (!preset) throw new ConfigError(`--env ${env}: choose one of ${Object.keys(TRAIN_PRESETS).join(', ')}`);
  const algorithms = (f['--algorithms'] ?? 'grpo,gigpo,starpo-s').split(',');
  for (const a of algorithms) if (!ALGORITHMS[a]) throw new ConfigError(`--algorithms: unknown '${a}'; use ${Object.keys(ALGORITHMS).join(', ')}`);
  const seeds = (f['--seeds'] ?? '1,2,3').split(',').map((s) => positiveInt('seeds', s, 1));
  const envSteps = positiveInt('env-steps', f['--env-steps'], 30_000);
  const groups = positiveInt('groups', f['--groups'], preset.groups);
  const groupSize = positiveInt('group-size', f['--group-size'], preset.groupSize);
  const evalTasks = positiveInt('eval-tasks', f['--eval-tasks'], 100);
  const evalEvery = positiveInt('eval-every', f['--eval-every'], 10);
  // Sampled trials per held-out task for pass@1 beside greedy success (0: greedy only).
  const evalSamples = f['--eval-samples'] === undefined ? 0 : positiveInt('eval-samples', f['--eval-samples'], 1);
  const { optimizer, model, loss, estimatorOptions } = runOverrides(f, preset, {
    learningRate: preset.learningRate,
    epochs: preset.optimizer?.epochs ?? 4,
    minibatches: preset.optimizer?.minibatches ?? 4,
  });
  const envOptions = { ...preset.envOptions, ...jsonObjectFlag('env-options', f['--env-options'], { example: '{"distanceShaping":1}' }) };
  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  const random = baselineSuccessRate(env, EVAL_SEEDS.take(evalTasks));
  console.error(`bench learning: ${env} ${JSON.stringify(envOptions)}, ${algorithms.join(' / ')}, seeds ${seeds.join(',')}, ${envSteps} env steps each, ${backend.description}`);
  console.error(
    `  ${groups} groups × ${groupSize}, optimizer ${JSON.stringify(optimizer)}, model ${JSON.stringify(model)}, loss ${JSON.stringify(loss)}, estimator options ${JSON.stringify(estimatorOptions)}`,
  );
  const diagnose = args.includes('--diagnose');
  const results: {
    algorithm: string;
    seed: number;
    final: number;
    untrained: number;
    curve: { envSteps: number; seconds: number; greedy: number; sampled?: number; entropy?: number; ppoKl?: number }[];
    toTarget?: ReturnType<typeof seedToTarget>;
    seconds: number;
    diagnosis?: IterationDiagnosis[];
  }[] = [];
  for (const algorithm of algorithms) {
    for (const seed of seeds) {
      const started = Date.now();
      // Enough iterations to pass envSteps; the run stops at the first iteration past it.
      const curve: CurvePoint[] = [];
      const evalSeconds: number[] = [];
      const stop = new AbortController();
      const recorder = diagnose ? diagnosisRecorder(env, envOptions, actionTokenIds(env, envOptions)) : undefined;
      await runLocal(
        {
          env,
          envOptions,
          iterations: 100_000,
          groups,
          groupSize,
          seed,
          evalEvery,
          evalTasks,
          evalSamples,
          processing: {
            reward: { terms: [{ kind: 'env_return' }] },
            ...ALGORITHMS[algorithm]!,
            estimator: { ...ALGORITHMS[algorithm]!.estimator, options: { ...(algorithm === preset.estimator ? preset.estimatorOptions : {}), ...estimatorOptions } },
          },
          optimizer,
          model,
          loss,
          evalAtStart: true,
          shouldStop: () => stop.signal.aborted,
          ...(recorder ? { onBatch: recorder.onBatch, onUpdated: recorder.onUpdated, observeGradients: recorder.observeGradients } : {}),
        },
        (point) => {
          curve.push(point);
          if (point.eval) evalSeconds.push((Date.now() - started) / 1000);
          if (point.eval)
            console.error(
              `  ${algorithm} seed ${seed}: ${point.envSteps} env steps, ${((Date.now() - started) / 1000).toFixed(0)} s, train success ${point.trainSuccess.toFixed(3)}, entropy ${point.update?.entropy.toFixed(3) ?? '-'}, greedy held-out ${point.eval.greedySuccess.toFixed(3)}${evalSamples > 0 ? `, sampled pass@1 ${point.eval.passAtK['pass@1']!.toFixed(3)}` : ''}`,
            );
          if (point.eval && recorder) console.error(`    ${diagnosisLine(recorder.records.at(-1))}`);
          if (point.envSteps >= envSteps) stop.abort();
        },
      );
      const evals = curve.filter((p) => p.eval);
      results.push({
        algorithm,
        seed,
        untrained: curve.find((p) => p.iteration === -1)?.eval?.greedySuccess ?? Number.NaN,
        final: evals.at(-1)?.eval?.greedySuccess ?? Number.NaN,
        curve: evals.map((p, i) => ({
          envSteps: p.envSteps,
          seconds: evalSeconds[i]!,
          greedy: p.eval!.greedySuccess,
          ...(evalSamples > 0 ? { sampled: p.eval!.passAtK['pass@1']! } : {}),
          ...(p.update ? { entropy: p.update.entropy, ppoKl: p.update.ppoKl } : {}),
        })),
        seconds: (Date.now() - started) / 1000,
        // The diagnosis at the evaluations only: every iteration's would make the saved file several times larger.
        ...(recorder ? { diagnosis: recorder.records.filter((d) => (d.iteration + 1) % evalEvery === 0) } : {}),
      });
    }
  }
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ${machine.backend}`);
  console.log(`${env}, held-out greedy success after ${envSteps} env steps (${evalTasks} tasks), random policy ${random.toFixed(3)}`);
  for (const algorithm of algorithms) {
    const finals = results.filter((r) => r.algorithm === algorithm).map((r) => r.final);
    const mean = finals.reduce((a, b) => a + b, 0) / finals.length;
    const std = Math.sqrt(finals.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, finals.length - 1));
    console.log(`  ${algorithm.padEnd(9)} ${mean.toFixed(3)} ± ${std.toFixed(3)}   (seeds: ${finals.map((x) => x.toFixed(3)).join(', ')})`);
  }
  // When each seed first reached the environment's target held-out success, and over the seeds of each algorithm.
  const target = TRAIN_EXPECTATIONS[env]?.target ?? 0.9;
  const withTargets = results.map((r) => ({ ...r, toTarget: seedToTarget(r.curve, target) }));
  const summary = Object.fromEntries(
    algorithms.map((a) => [
      a,
      seedsToTarget(
        results.filter((r) => r.algorithm === a).map((r) => r.curve),
        target,
      ),
    ]),
  );
  for (const [a, s] of Object.entries(summary))
    console.log(`  ${a}: ${s.seedsReachingTarget} of ${s.seeds} seeds reached ${target}; median env steps ${s.medianEnvStepsToTarget ?? 'never'}`);
  emitResult(
    args,
    {
      bench: 'learning',
      path: 'in-process',
      machine,
      env,
      envOptions,
      envSteps,
      groups,
      groupSize,
      optimizer,
      model,
      loss,
      estimatorOptions,
      random,
      target,
      summary,
      results: withTargets,
    },
    `inprocess-${env.toLowerCase()}`,
  );
  return 0;
}
