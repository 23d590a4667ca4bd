// `trajflow bench learning --path real`: the learning curve of the system a user runs — `trajflow train` as a
// child process (actors, processors, learner, sink, evaluator, each its own process, all through the real
// broker) — beside the in-process loop on the same seed and the same number of updates. The real path's
// held-out curve comes from its evaluator's events (the same numbers the run page draws); the in-process one
// from runLocal's evaluations on the same held-out tasks.
//   trajflow bench learning --path real --env FrozenLake --seeds 1 --updates 200 [--eval-every 10] [--eval-tasks 100] [--target 0.9] [--real on|off] [--json]
// Per seed and over seeds it reports when held-out success first reached --target (learning-summary.ts).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { nonNegativeInt, numberFlag, parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import { TRAIN_EXPECTATIONS } from '../cli/train/expectations.js';
import { TRAIN_PRESETS } from '../cli/train/presets.js';
import { ConfigError } from '../core/errors.js';
import { freePort } from '../infra/free-port.js';
import { selectBackend } from '../learner/backend.js';
import type { EnvName } from '../envs/registry.js';
import { runLocal, type CurvePoint } from '../learner/local/local-run.js';
import { emitResult } from './results-file.js';
import { NOTHING_READ, readTrainLine, trainArgs, type CurveEntry } from './learning-real-lines.js';
import { type HeldOutPoint, type SeedsToTarget, seedsToTarget, seedToTarget } from './learning-summary.js';

const CLI = fileURLToPath(new URL('../bin/trajflow.mjs', import.meta.url));

export interface RealRun {
  readonly curve: CurveEntry[];
  readonly random: number;
  readonly stalenessMax: number;
  readonly droppedStale: number;
  readonly updates: number;
  readonly seconds: number;
  readonly exitCode: number | null;
}

/** Runs `trajflow train` to `updates` updates on its own topics and reads its evaluator's and learner's lines. */
export async function trainRealPath(
  env: EnvName,
  seed: number,
  updates: number,
  evalEvery: number,
  evalTasks: number,
  maxStaleness: number,
  log: (line: string) => void,
): Promise<RealRun> {
  const started = Date.now();
  const stamp = started.toString(36);
  const runId = `bench-${env}-s${seed}-${stamp}`;
  const args = trainArgs({ env, seed, updates, runId, evalEvery, evalTasks, maxStaleness, port: await freePort() });
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: `bench.learning.${stamp}` }, stdio: ['ignore', 'pipe', 'pipe'] });
  // A bench stopped by a signal stops its run the way Ctrl-C stops `trajflow train`, so no part outlives it, and then ends.
  const forward = (signal: NodeJS.Signals) => {
    child.once('exit', () => process.exit(130));
    child.kill(signal);
  };
  process.once('SIGINT', forward).once('SIGTERM', forward);
  let read = NOTHING_READ;
  const onChunk = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      const next = readTrainLine(read, line, secondsSince(started), seed);
      read = next.read;
      if (next.log !== null) log(next.log);
    }
  };
  child.stdout.on('data', onChunk);
  child.stderr.on('data', onChunk);
  const exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  process.off('SIGINT', forward).off('SIGTERM', forward);
  const { random, stalenessMax, droppedStale, done } = read;
  return { curve: [...read.curve], random, stalenessMax, droppedStale, updates: done, seconds: (Date.now() - started) / 1000, exitCode };
}

/** The in-process loop on the same seed, preset, number of updates and staleness K, evaluated every `evalEvery` updates. */
export async function trainInProcess(
  env: EnvName,
  seed: number,
  updates: number,
  evalEvery: number,
  evalTasks: number,
  maxStaleness: number,
  log: (line: string) => void,
): Promise<{ curve: CurveEntry[]; seconds: number }> {
  const preset = TRAIN_PRESETS[env]!;
  const started = Date.now();
  const curve: CurveEntry[] = [];
  const record = (point: CurvePoint) => {
    if (!point.eval) return;
    const seconds = secondsSince(started);
    curve.push({ version: point.iteration + 1, envSteps: point.envSteps, heldOut: point.eval.greedySuccess, seconds });
    log(`  in-process seed ${seed}: v${point.iteration + 1}, ${point.envSteps} env steps, ${seconds.toFixed(0)} s, held-out ${point.eval.greedySuccess.toFixed(3)}`);
  };
  await runLocal(
    {
      env,
      envOptions: preset.envOptions,
      iterations: updates,
      groups: preset.groups,
      groupSize: preset.groupSize,
      seed,
      evalEvery,
      evalTasks,
      evalAtStart: true,
      maxStaleness,
      // What `trajflow train` hands the processors for the preset.
      processing: {
        reward: { terms: [{ kind: 'env_return' }] },
        estimator: { name: preset.estimator as never, ...(preset.estimatorOptions ? { options: preset.estimatorOptions as never } : {}) },
        filters: preset.filters.map((name) => ({ name: name as never })),
      },
      optimizer: { learningRate: preset.learningRate, ...preset.optimizer },
      ...(preset.model ? { model: { ...preset.model, seed } } : { model: { seed } }),
      ...(preset.loss ? { loss: preset.loss } : {}),
    },
    record,
  );
  return { curve, seconds: (Date.now() - started) / 1000 };
}

/** Wall seconds since `startedMs`, to a tenth. */
function secondsSince(startedMs: number): number {
  return Math.round((Date.now() - startedMs) / 100) / 10;
}

/** A path's curve as learning-summary.ts reads it. */
function heldOutPoints(curve: readonly CurveEntry[]): HeldOutPoint[] {
  return curve.map((p) => ({ envSteps: p.envSteps, greedy: p.heldOut, seconds: p.seconds }));
}

/** The held-out success the bench reports reaching: --target, else the env's goal (cli/train/expectations.ts), else 0.9. */
function targetOf(env: string, flag: string | undefined): number {
  const target = numberFlag('target', flag, { positive: true }) ?? TRAIN_EXPECTATIONS[env]?.target ?? 0.9;
  if (target > 1) throw new ConfigError(`--target ${target}: a held-out success rate is at most 1`);
  return target;
}

/** A path's run with when it first reached `target` (envStepsToTarget, wallSecondsToTarget and their named twins). */
function withReach<R extends { readonly curve: readonly CurveEntry[] }>(run: R | null, target: number) {
  return run === null ? null : { ...run, ...seedToTarget(heldOutPoints(run.curve), target) };
}

type Reached = { readonly envStepsToTarget: number | null; readonly wallSecondsToTarget: number | null };

/** `≥ 0.9 at 48,000 env steps, 310 s` or `≥ 0.9 never`. */
function reachText(run: Reached, target: number): string {
  if (run.envStepsToTarget === null) return `≥ ${target} never`;
  return `≥ ${target} at ${run.envStepsToTarget.toLocaleString('en-US')} env steps${run.wallSecondsToTarget === null ? '' : `, ${run.wallSecondsToTarget.toFixed(0)} s`}`;
}

export async function runRealPathBench(args: readonly string[]): Promise<number> {
  const f = parseFlagPairs(
    args.filter((a) => a !== '--json' && a !== '--save' && a !== 'learning'),
    REAL_FLAGS,
    REAL_USAGE,
  );
  const env = (f['--env'] ?? 'FrozenLake') as EnvName;
  if (!TRAIN_PRESETS[env]) throw new ConfigError(`--env ${env}: choose one of ${Object.keys(TRAIN_PRESETS).join(', ')}`);
  const seeds = (f['--seeds'] ?? '1').split(',').map((s) => positiveInt('seeds', s, 1));
  const updates = positiveInt('updates', f['--updates'], 200);
  const evalEvery = positiveInt('eval-every', f['--eval-every'], 10);
  const evalTasks = positiveInt('eval-tasks', f['--eval-tasks'], 100);
  const target = targetOf(env, f['--target']);
  const skipLocal = f['--in-process'] === 'off';
  const skipReal = f['--real'] === 'off';
  if (skipLocal && skipReal) throw new ConfigError('--in-process off --real off: nothing to run; turn one of them on');
  const maxStaleness = nonNegativeInt('max-staleness', f['--max-staleness'], 0);
  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  const log = (line: string) => console.error(line);
  log(
    `bench learning --path real: ${env}, seeds ${seeds.join(',')}, ${updates} updates each, max staleness ${maxStaleness}, held-out every ${evalEvery} on ${evalTasks} tasks, target ${target}, ${backend.description}`,
  );
  const results: SeedResult[] = [];
  for (const seed of seeds) {
    const real = skipReal ? null : await trainRealPath(env, seed, updates, evalEvery, evalTasks, maxStaleness, log);
    const local = skipLocal ? null : await trainInProcess(env, seed, updates, evalEvery, evalTasks, maxStaleness, log);
    results.push({ seed, real: withReach(real, target), inProcess: withReach(local, target) });
  }
  // Over the seeds, per path run: how many reached the target and the median env steps.
  const curvesOf = (path: 'real' | 'inProcess') => results.map((r) => heldOutPoints(r[path]!.curve));
  const summary = {
    ...(skipReal ? {} : { real: seedsToTarget(curvesOf('real'), target) }),
    ...(skipLocal ? {} : { inProcess: seedsToTarget(curvesOf('inProcess'), target) }),
  };
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ${machine.backend}`);
  console.log(`${env}, ${updates} updates, held-out greedy success (${evalTasks} tasks); real path = trajflow train (every part its own process, through Kafka)`);
  for (const result of results) printSeed(result, target);
  for (const [path, s] of Object.entries(summary)) printSummary(path === 'real' ? 'real path' : 'in-process', s);
  emitResult(
    args,
    { bench: 'learning', path: 'real', maxStaleness, machine, env, updates, evalEvery, evalTasks, target, results, summary },
    `real-${env.toLowerCase()}-s${seeds.join('_')}-k${maxStaleness}`,
  );
  return results.every((r) => r.real === null || r.real.exitCode === 0) ? 0 : 1;
}

type SeedResult = {
  readonly seed: number;
  readonly real: (RealRun & Reached) | null;
  readonly inProcess: ({ readonly curve: CurveEntry[]; readonly seconds: number } & Reached) | null;
};

/** One seed's lines: each path's last held-out result and when it reached the target, and the real path's cost in env steps beside the in-process loop's. */
function printSeed({ seed, real, inProcess }: SeedResult, target: number): void {
  if (real) {
    const last = real.curve.at(-1);
    console.log(
      `  seed ${seed} real path:  held-out ${last?.heldOut.toFixed(3) ?? '-'} at ${last?.envSteps ?? '-'} env steps (random ${real.random.toFixed(3)}), ${reachText(real, target)}, ` +
        `staleness max ${real.stalenessMax}, ${real.droppedStale} stale dropped, ${real.updates} updates, ${real.seconds.toFixed(0)} s, exit ${real.exitCode}`,
    );
  }
  if (!inProcess) return;
  const lastLocal = inProcess.curve.at(-1);
  console.log(
    `  seed ${seed} in-process: held-out ${lastLocal?.heldOut.toFixed(3) ?? '-'} at ${lastLocal?.envSteps ?? '-'} env steps, ${reachText(inProcess, target)}, ${inProcess.seconds.toFixed(0)} s`,
  );
  const reach = real?.envStepsToTarget ?? null;
  const reachLocal = inProcess.envStepsToTarget;
  if (reach === 0 && reachLocal === 0) console.log(`  seed ${seed}: the untrained policy is already at ${target} on both paths (this seed measures nothing learned)`);
  else if (reach !== null && reachLocal !== null && reachLocal > 0)
    console.log(`  seed ${seed}: the real path needed ${(reach / reachLocal).toFixed(2)}× the in-process loop's env steps to reach ${target}`);
}

/** A path over the seeds: how many reached the target, and the median env steps (a seed that never did counts as never). */
function printSummary(path: string, s: SeedsToTarget): void {
  const seconds = s.medianWallSecondsToTarget === null ? '' : `, ${Math.round(s.medianWallSecondsToTarget)} s`;
  const middle = s.medianEnvStepsToTarget === null ? 'never (the median seed did not reach it)' : `${s.medianEnvStepsToTarget.toLocaleString('en-US')} env steps${seconds}`;
  console.log(`${path}: ${s.seedsReachingTarget} of ${s.seeds} seeds reached held-out ≥ ${s.target}; median ${middle}`);
}

const REAL_FLAGS = ['--path', '--env', '--seeds', '--updates', '--eval-every', '--eval-tasks', '--target', '--in-process', '--real', '--max-staleness'] as const;
const REAL_USAGE =
  'trajflow bench learning --path real [--env FrozenLake] [--seeds 1] [--updates 200] [--eval-every 10] [--eval-tasks 100] [--target 0.9 (Sokoban 0.5)] [--max-staleness 0] [--in-process on|off] [--real on|off] [--json] [--save]';
