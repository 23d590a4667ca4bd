// The actors' typed config, checked when built: every message says what to change.
import { ConfigError } from '../core/errors.js';
import { isEnvName, envNames, type EnvName } from '../envs/registry.js';
import { TRAIN_SEEDS } from '../envs/seeds.js';
import { createRolloutEnv } from './rollout-env.js';

export interface ActorsConfig {
  /** Training run: part of every group, episode and event id (letters, digits, '.', '_', '-'). */
  readonly runId: string;
  /** Built-in environment to roll out. */
  readonly envName: EnvName;
  /** The environment's options (checked by building it once); Bandit's rewardSeedOffset is shifted per rollout. */
  readonly envOptions: Readonly<Record<string, unknown>>;
  /** P: groups (tasks) per iteration. */
  readonly groups: number;
  /** G: rollouts per group, all reset with the group's seed. */
  readonly groupSize: number;
  /** Seed of the run's group 0; group g resets with seedBase + g. Must stay in TRAIN_SEEDS. */
  readonly seedBase: number;
  /** Iterations (batches of P × G episodes) to run; null runs until stopped. */
  readonly iterations: number | null;
  /** Number of the first iteration (to resume a run: group indices, seeds and ids continue from there). */
  readonly firstIteration: number;
  /** Iterations the actors may run ahead of the learner's last published version (staleness-gate.ts); null: no bound. */
  readonly maxStaleness: number | null;
  /** A progress line every this many ms (0: none). */
  readonly progressEveryMs: number;
  /**
   * This process's share of every iteration when several actor processes run one run: the groups g with
   * g mod count = index (`--shard index/count`). Default 0/1: all of them.
   */
  readonly shard: { readonly index: number; readonly count: number };
}

export const ACTORS_DEFAULTS = {
  envOptions: {},
  groups: 8,
  groupSize: 8,
  seedBase: 0,
  iterations: null,
  firstIteration: 0,
  maxStaleness: null,
  progressEveryMs: 5000,
  shard: { index: 0, count: 1 },
} as const satisfies Partial<ActorsConfig>;

/** Most episodes in flight at once (P × G): each holds an environment and its pending events. */
export const MAX_CONCURRENT_EPISODES = 65_536;

export type ActorsConfigInput = Omit<Partial<ActorsConfig>, 'envName'> & Pick<ActorsConfig, 'runId'> & { envName: string };

function integer(name: string, value: unknown, min: number, max: number, hint: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`actors: ${name}=${String(value)} must be an integer between ${min} and ${max} (${hint}).`);
  }
  return value;
}

/** Fills the defaults and checks everything, or throws ConfigError saying how to fix it. */
export function actorsConfig(input: ActorsConfigInput): ActorsConfig {
  const c = { ...ACTORS_DEFAULTS, ...input };
  if (typeof c.runId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(c.runId)) {
    throw new ConfigError(`actors: runId=${JSON.stringify(c.runId)} must be 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit (set --run-id).`);
  }
  if (!isEnvName(c.envName)) {
    throw new ConfigError(`actors: unknown environment '${c.envName}'; choose one of ${envNames.join(', ')} (set --env).`);
  }
  if (c.envOptions === null || typeof c.envOptions !== 'object' || Array.isArray(c.envOptions)) {
    throw new ConfigError('actors: envOptions must be an object of option names to values.');
  }
  integer('groups', c.groups, 1, 4096, 'P, the tasks per iteration; set --groups');
  integer('groupSize', c.groupSize, 1, 1024, 'G, the rollouts per task; set --group-size');
  if (c.groups * c.groupSize > MAX_CONCURRENT_EPISODES) {
    throw new ConfigError(`actors: groups × groupSize = ${c.groups * c.groupSize} episodes in flight is more than ${MAX_CONCURRENT_EPISODES}; lower --groups or --group-size.`);
  }
  integer('seedBase', c.seedBase, TRAIN_SEEDS.first, TRAIN_SEEDS.end - 1, `a training seed; evaluation seeds start at ${TRAIN_SEEDS.end}; set --seed`);
  integer('firstIteration', c.firstIteration, 0, Number.MAX_SAFE_INTEGER, 'the iteration to resume from');
  if (c.iterations !== null) integer('iterations', c.iterations, 1, Number.MAX_SAFE_INTEGER, 'or null to run until stopped; set --iterations or --episodes');
  if (c.maxStaleness !== null) integer('maxStaleness', c.maxStaleness, 0, 1_000_000, 'iterations ahead of the learner, or null for no bound; set --max-staleness');
  integer('progressEveryMs', c.progressEveryMs, 0, 3_600_000, '0 turns progress lines off');
  integer('shard count', c.shard.count, 1, c.groups, 'the actor processes sharing the run, at most the groups per iteration; set --shard index/count');
  integer('shard index', c.shard.index, 0, c.shard.count - 1, 'this process among them, from 0; set --shard index/count');
  // Every group seed the run will use must be a training seed.
  const firstSeed = c.seedBase + c.firstIteration * c.groups;
  const lastSeed = c.iterations === null ? firstSeed : firstSeed + c.iterations * c.groups - 1;
  if (!TRAIN_SEEDS.contains(firstSeed) || !TRAIN_SEEDS.contains(lastSeed)) {
    throw new ConfigError(
      `actors: the run would reset with seeds ${firstSeed}…${lastSeed}, outside the training seeds [${TRAIN_SEEDS.first}, ${TRAIN_SEEDS.end}); lower --seed or the iterations.`,
    );
  }
  const config: ActorsConfig = Object.freeze({ ...c, envName: c.envName, envOptions: Object.freeze({ ...c.envOptions }), shard: Object.freeze({ ...c.shard }) });
  // Building the environment checks its options (with the largest per-rollout shift it will get).
  createRolloutEnv(config, c.groupSize - 1);
  return config;
}
