// `trajflow eval`: a checkpoint of a run plays held-out tasks (evaluation seeds, never trained on) —
// greedy success, mean reward, and pass@k / pass^k from sampled trials — next to the uniform-random
// policy on the same seeds.
//   trajflow eval --run-id R [--version N|latest] [--checkpoint DIR] [--env FrozenLake] [--env-options JSON] [--other-env]
//                 [--tasks 200] [--samples 8] [--k 1,4,8] [--temperature 1] [--backend auto] [--max-batch 64] [--json]
//
// Decisions:
//   - The environment and its options are the run's own: every checkpoint records what the learner was told
//     (`trajflow train` tells it the actors'). --env / --env-options that differ from them are refused unless
//     --other-env says the other task is meant; a checkpoint from before runs recorded it needs --env.
//   - The checkpoint comes from the run's default directory under the current topic prefix (the learner's
//     checkpointDir), or --checkpoint: either that kind of directory (v00000012/ … inside) or one version's
//     directory (with manifest.json). Only checkpoints still on disk can be evaluated (the learner keeps the
//     newest few); an unknown version is an error listing the ones there are.
//   - The sampling temperature is not in the checkpoint; --temperature (default 1, the learner's default)
//     should be the one the run trained with.
//   - evaluate() plays every episode at once and the transformer answers all pending turns as one batch;
//     200 tasks × 8 trials would be one forward pass over 1,600 contexts. The policy is wrapped so each
//     forward pass takes at most --max-batch contexts. Each reply depends only on its own context and
//     seed, so the results do not depend on the batch size (a unit test checks).
//   - The random baseline: success, reward and steps from envs/baseline.ts measureBaseline (one
//     episode per seed), and pass@k / pass^k of the same uniform policy (envs/policy/random-policy.ts)
//     from `samples` trials per task with evaluate().
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { jsonObjectFlag, numberFlag, parseFlagPairs } from '../../infra/cli/flags.js';
import { progressBar } from '../../infra/cli/progress.js';
import type { Command } from '../../infra/cli/command.js';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { createEnv, envNames, isEnvName, type EnvName } from '../../envs/registry.js';
import { EVAL_SEEDS } from '../../envs/seeds.js';
import { parseBackendChoice, selectBackend, type BackendChoice } from '../backend.js';
import { checkpointUri, CheckpointError, latestCheckpoint, readCheckpoint, type CheckpointManifest } from '../checkpoint/checkpoint.js';
import { buildLearnerConfig } from '../loop/config.js';
import { disposeBundle, type PolicyBundle } from '../policy/bundle.js';
import { loadPolicyFromCheckpoint } from '../policy/checkpoint-provider.js';
import { evaluateBundle, type EvalComparison } from './compare.js';
import { evalEnvironment } from './run-environment.js';

const FLAGS = ['--run-id', '--version', '--checkpoint', '--env', '--env-options', '--tasks', '--samples', '--k', '--temperature', '--backend', '--max-batch'] as const;
export const EVAL_USAGE =
  "trajflow eval --run-id R [--version N|latest] [--checkpoint DIR] [--env <the run's>] [--env-options <the run's>] [--other-env] [--tasks 200] " +
  '[--samples 8] [--k 1,4,8] [--temperature 1] [--backend auto|node-gpu|node|wasm|cpu] [--max-batch 64] [--json]';

export interface EvalArgs {
  readonly runId: string | undefined;
  readonly checkpoint: string | undefined;
  readonly version: number | 'latest';
  /** The environment asked for; undefined: the run's own (from its checkpoint). */
  readonly envName: EnvName | undefined;
  readonly envOptions: Record<string, unknown> | undefined;
  /** Evaluate on --env / --env-options even where they differ from the run's. */
  readonly otherEnv: boolean;
  readonly tasks: number;
  /** Sampled trials per task for pass@k / pass^k; 0: greedy only. */
  readonly samples: number;
  readonly ks: readonly number[];
  readonly temperature: number;
  readonly backend: BackendChoice;
  readonly maxBatch: number;
  readonly json: boolean;
}

function count(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) throw new ConfigError(`--${name} needs an integer in ${min}..${max}, got '${raw}'`);
  return value;
}

/** Flags → checked eval settings; ConfigError (with the usage where it helps) on anything wrong. */
export function parseEvalArgs(args: readonly string[]): EvalArgs {
  // --json takes no value; only where a flag name is expected (`--env --json` stays a missing value).
  let json = false;
  let otherEnv = false;
  const rest: string[] = [];
  for (const arg of args) {
    if (arg === '--json' && rest.length % 2 === 0) json = true;
    else if (arg === '--other-env' && rest.length % 2 === 0) otherEnv = true;
    else rest.push(arg);
  }
  const f = parseFlagPairs(rest, FLAGS, EVAL_USAGE);
  if (f['--run-id'] === undefined && f['--checkpoint'] === undefined) throw new ConfigError(`--run-id (or --checkpoint DIR) is required; usage: ${EVAL_USAGE}`);
  const envName = f['--env'];
  if (envName !== undefined && !isEnvName(envName)) throw new ConfigError(`--env '${envName}' is not a built-in environment; use one of ${envNames.join(', ')}`);
  const envOptions = f['--env-options'] === undefined ? undefined : jsonObjectFlag('env-options', f['--env-options'], { example: '{"slippery":false}' });
  if (envName !== undefined) createEnv(envName, envOptions ?? {}); // checks the options now (ConfigError naming the option)
  let version: number | 'latest' = 'latest';
  if (f['--version'] !== undefined && f['--version'] !== 'latest') version = count('version', f['--version'], 0, 0, Number.MAX_SAFE_INTEGER);
  const tasks = count('tasks', f['--tasks'], 200, 1, 100_000);
  const samples = count('samples', f['--samples'], 8, 0, 1000);
  let ks: number[] = [];
  if (samples > 0) {
    const raw = f['--k'] ?? [1, 4, 8].filter((k) => k <= samples).join(',');
    ks = [...new Set(raw.split(',').map((part) => count('k', part.trim(), 1, 1, samples)))].sort((a, b) => a - b);
    if (ks.length === 0) throw new ConfigError(`--k needs k values such as 1,4,8 (each at most --samples ${samples})`);
  } else if (f['--k'] !== undefined) {
    throw new ConfigError('--k needs sampled trials: set --samples to at least the largest k');
  }
  return {
    runId: f['--run-id'],
    checkpoint: f['--checkpoint'],
    version,
    envName,
    envOptions,
    otherEnv,
    tasks,
    samples,
    ks,
    temperature: numberFlag('temperature', f['--temperature'], { positive: true }) ?? 1,
    backend: f['--backend'] === undefined ? 'auto' : parseBackendChoice(f['--backend']),
    maxBatch: count('max-batch', f['--max-batch'], 64, 1, 100_000),
    json,
  };
}

/** Versions with a complete checkpoint (a manifest) under a run's checkpoint directory, ascending. */
export async function checkpointVersions(root: string): Promise<number[]> {
  const entries = await readdir(root).catch(() => [] as string[]);
  const versions: number[] = [];
  for (const entry of entries) {
    const match = /^v(\d{8})$/.exec(entry);
    if (match && (await stat(join(root, entry, 'manifest.json')).catch(() => undefined))) versions.push(Number(match[1]));
  }
  return versions.sort((a, b) => a - b);
}

/** The checkpoint directory the args name (see the header), checked to exist. */
export async function resolveCheckpoint(
  trajflow: TrajflowConfig,
  args: Pick<EvalArgs, 'runId' | 'checkpoint' | 'version'>,
): Promise<{ directory: string; manifest: CheckpointManifest }> {
  const root = args.checkpoint ?? buildLearnerConfig(trajflow, { runId: args.runId! }).checkpointDir;
  if (await stat(join(root, 'manifest.json')).catch(() => undefined)) {
    const { manifest } = await readCheckpoint(root);
    if (args.version !== 'latest' && args.version !== manifest.version)
      throw new ConfigError(`${root} holds version ${manifest.version}, not ${args.version}; drop --version or point --checkpoint at the run's directory`);
    return { directory: root, manifest };
  }
  const where = args.checkpoint === undefined ? `run ${args.runId} under topic prefix ${trajflow.topicPrefix} (${root})` : root;
  if (args.version === 'latest') {
    const latest = await latestCheckpoint(root);
    if (!latest) throw new ConfigError(`no checkpoint for ${where}; train with 'trajflow learner --run-id ${args.runId ?? 'R'}' first, or pass --checkpoint DIR`);
    return { directory: latest.directory, manifest: latest.manifest };
  }
  const versions = await checkpointVersions(root);
  if (!versions.includes(args.version)) {
    throw new ConfigError(
      `no checkpoint of version ${args.version} for ${where}; versions on disk: ${versions.length === 0 ? 'none' : versions.join(', ')} (the learner keeps the newest few)`,
    );
  }
  const directory = join(root, `v${String(args.version).padStart(8, '0')}`);
  return { directory, manifest: (await readCheckpoint(directory)).manifest };
}

export interface EvalReport extends EvalComparison {
  readonly runId: string;
  readonly version: number;
  readonly checkpoint: string;
  readonly env: EnvName;
  readonly envOptions: Record<string, unknown>;
  readonly tasks: number;
  readonly seeds: { readonly first: number; readonly last: number };
  readonly samples: number;
  readonly ks: readonly number[];
  readonly temperature: number;
  readonly backend: string;
  readonly durationMs: number;
}

export async function runEval(trajflow: TrajflowConfig, args: EvalArgs, log: (line: string) => void = (line) => console.error(line)): Promise<EvalReport> {
  const started = performance.now();
  const { directory, manifest } = await resolveCheckpoint(trajflow, args);
  if (args.runId !== undefined && manifest.runId !== args.runId) log(`eval: note: ${directory} belongs to run ${manifest.runId}, not ${args.runId}`);
  const { envName, envOptions } = evalEnvironment(manifest, args);
  const backend = await selectBackend(args.backend);
  const envWords = createEnv(envName, envOptions).actionVocabulary;
  const unknown = envWords.filter((w) => !manifest.replyWords.includes(w));
  if (unknown.length > 0) log(`eval: note: the checkpoint's reply words lack ${envName}'s actions ${unknown.join(', ')}: was it trained on another environment? (--env)`);
  const seeds = EVAL_SEEDS.take(args.tasks);
  let loaded: { bundle: PolicyBundle } | undefined;
  try {
    loaded = await loadPolicyFromCheckpoint(directory, manifest.version, { checksum: manifest.checksum });
    const bar = progressBar({ label: `eval v${manifest.version}`, total: seeds.length * (1 + args.samples), unit: 'episodes' });
    const comparison = await evaluateBundle(loaded.bundle, manifest.version, { ...args, envName, envOptions, seeds, onEpisode: () => bar.tick() });
    bar.finish();
    return {
      runId: manifest.runId,
      version: manifest.version,
      checkpoint: checkpointUri(directory),
      env: envName,
      envOptions,
      tasks: seeds.length,
      seeds: { first: seeds[0]!, last: seeds[seeds.length - 1]! },
      samples: args.samples,
      ks: args.ks,
      temperature: args.temperature,
      backend: backend.name,
      ...comparison,
      durationMs: performance.now() - started,
    };
  } catch (error) {
    if (error instanceof CheckpointError) throw new ConfigError(error.message);
    throw error;
  } finally {
    if (loaded) disposeBundle(loaded.bundle);
  }
}

export function formatEvalReport(r: EvalReport): string {
  const num = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(3)).padStart(8);
  const row = (label: string, a: number | undefined, b: number | undefined) => `  ${label.padEnd(16)}${num(a)}  ${num(b)}`;
  const options = ` ${JSON.stringify(r.envOptions)}`;
  const lines = [
    `eval: run ${r.runId}, policy v${r.version} (${r.checkpoint}), ${r.env}${options}`,
    `  ${r.tasks} held-out tasks (seeds ${r.seeds.first}..${r.seeds.last})${r.samples > 0 ? `, ${r.samples} sampled trials per task at temperature ${r.temperature}` : ''}, backend ${r.backend}`,
    `  ${''.padEnd(16)}${'policy'.padStart(8)}  ${'random'.padStart(8)}`,
    row('greedy success', r.policy.greedySuccess, r.random.success),
    row('mean reward', r.policy.meanReward, r.random.meanReward),
    row('mean steps', r.policy.meanSteps, r.random.meanSteps),
  ];
  for (const k of r.ks) {
    lines.push(row(`pass@${k}`, r.policy.passAtK[`pass@${k}`], r.random.passAtK[`pass@${k}`]));
    lines.push(row(`pass^${k}`, r.policy.passHatK[`pass^${k}`], r.random.passHatK[`pass^${k}`]));
  }
  lines.push(`  (random: the uniform policy, one episode per task for success/reward/steps); took ${(r.durationMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

export const evalCommand: Command = {
  summary: "evaluate a run's checkpoint on held-out seeds: greedy success, pass@k and pass^k, next to the random policy",
  usage: EVAL_USAGE,
  async run(args) {
    const parsed = parseEvalArgs(args);
    const report = await runEval(loadConfig(), parsed);
    console.log(parsed.json ? JSON.stringify(report) : formatEvalReport(report));
    return 0;
  },
};
