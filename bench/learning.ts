// `trajflow bench learning`: the learning curves and the algorithm comparison of docs/results/learning.md, measured with
// the in-process loop (learner/local/local-run.ts: the same actors' episode code, processors' functions and
// learner trainer as the streaming system, without Kafka, fully seeded).
//   trajflow bench learning --env FrozenLake --algorithms grpo,gigpo,starpo-s --seeds 1,2,3 --env-steps 30000 [--json]
// Each (algorithm, seed) trains until it has used --env-steps environment steps; the table gives mean ± std
// of held-out greedy success at the end, next to the untrained policy and the random baseline.
import { cpus } from 'node:os';
import { ConfigError } from '../core/errors.js';
import { baselineSuccessRate } from '../envs/baseline.js';
import { EVAL_SEEDS } from '../envs/seeds.js';
import { selectBackend } from '../learner/backend.js';
import { emitResult } from './results-file.js';
import { seedToTarget } from './learning-summary.js';
import { TRAIN_EXPECTATIONS } from '../cli/train/expectations.js';
import { learningBenchConfig, type LearningBenchConfig } from './learning-flags.js';
import { runLearningSeed, type SeedResult } from './learning-seed.js';
import { comparisonLines, targetSummary } from './learning-report.js';

/** The run's two header lines on stderr: what is trained, and with which settings. */
function logConfig(s: LearningBenchConfig, backend: string): void {
  console.error(`bench learning: ${s.env} ${JSON.stringify(s.envOptions)}, ${s.algorithms.join(' / ')}, seeds ${s.seeds.join(',')}, ${s.envSteps} env steps each, ${backend}`);
  console.error(
    `  ${s.groups} groups × ${s.groupSize}, optimizer ${JSON.stringify(s.optimizer)}, model ${JSON.stringify(s.model)}, loss ${JSON.stringify(s.loss)}, estimator options ${JSON.stringify({ ...s.preset.estimatorOptions, ...s.estimatorOptions })} for ${s.preset.estimator}, ${JSON.stringify(s.estimatorOptions)} for the others`,
  );
}

export async function runLearningBench(args: string[]): Promise<number> {
  const path = args[args.indexOf('--path') + 1];
  if (args.includes('--path') && path !== 'in-process') {
    if (path !== 'real') throw new ConfigError(`--path must be real or in-process, got ${path ?? 'nothing'}`);
    return (await import('./learning-real.js')).runRealPathBench(args);
  }
  const s = learningBenchConfig(args);
  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  const random = baselineSuccessRate(s.env, EVAL_SEEDS.take(s.evalTasks));
  logConfig(s, backend.description);
  const results: SeedResult[] = [];
  for (const algorithm of s.algorithms) {
    for (const seed of s.seeds) results.push(await runLearningSeed(s, algorithm, seed));
  }
  // When each seed first reached the environment's target held-out success, and over the seeds of each algorithm.
  const target = TRAIN_EXPECTATIONS[s.env]?.target ?? 0.9;
  const summary = targetSummary(results, s.algorithms, target);
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ${machine.backend}`);
  console.log(`${s.env}, held-out greedy success after ${s.envSteps} env steps (${s.evalTasks} tasks), random policy ${random.toFixed(3)}`);
  for (const line of comparisonLines(results, s.algorithms, summary, target)) console.log(line);
  const { env, envOptions, envSteps, groups, groupSize, optimizer, model, loss, estimatorOptions } = s;
  const withTargets = results.map((r) => ({ ...r, toTarget: seedToTarget(r.curve, target) }));
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
