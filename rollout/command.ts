// `trajflow actors`: roll out the uniform-random policy on a built-in environment and publish every step.
//   trajflow actors --env FrozenLake --groups 8 --group-size 8 [--episodes N | --iterations N]
//                   [--run-id R] [--seed S] [--max-staleness K] [--env-options JSON] [--first-iteration I]
//                   [--progress-ms MS]
// Without --episodes/--iterations it runs until SIGINT/SIGTERM, then completes the started iterations,
// flushes, and exits.
import type { Command } from '../infra/cli/command.js';
import { loadConfig, topicName } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { ensureUp } from '../infra/up.js';
import { connectBackbone, shutdownOnSignals } from '../streams/index.js';
import { actorsConfig, ACTORS_DEFAULTS, type ActorsConfig } from './config.js';
import { startActors } from './start-actors.js';
import { jsonObjectFlag, parseFlagPairs } from '../infra/cli/flags.js';

const USAGE =
  'trajflow actors [--env FrozenLake] [--groups 8] [--group-size 8] [--episodes N | --iterations N] [--run-id R] [--seed S] ' +
  '[--max-staleness K] [--env-options JSON] [--first-iteration I] [--progress-ms MS] [--policy transformer|random] [--temperature T] [--model JSON] [--shard i/n]';

const FLAGS = [
  '--env',
  '--groups',
  '--group-size',
  '--episodes',
  '--iterations',
  '--run-id',
  '--seed',
  '--max-staleness',
  '--env-options',
  '--first-iteration',
  '--progress-ms',
  '--policy',
  '--temperature',
  '--model',
  '--shard',
] as const;
type Flag = (typeof FLAGS)[number];

/** Reads `--flag value` pairs; unknown flags and missing values are ConfigErrors. */
export function parseFlags(args: readonly string[]): Partial<Record<Flag, string>> {
  return parseFlagPairs(args, FLAGS, USAGE);
}

function integerFlag(flags: Partial<Record<Flag, string>>, name: Flag): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} needs a non-negative integer, got '${raw}'`);
  return Number(raw);
}

/** The actors' config from the command line (checked by actorsConfig). */
export function configFromArgs(args: readonly string[], now = Date.now()): ActorsConfig {
  const flags = parseFlags(args);
  const envName = flags['--env'] ?? 'FrozenLake';
  const groups = integerFlag(flags, '--groups') ?? ACTORS_DEFAULTS.groups;
  const groupSize = integerFlag(flags, '--group-size') ?? ACTORS_DEFAULTS.groupSize;
  const seedBase = integerFlag(flags, '--seed') ?? ACTORS_DEFAULTS.seedBase;
  const episodes = integerFlag(flags, '--episodes');
  let iterations = integerFlag(flags, '--iterations') ?? null;
  if (episodes !== undefined) {
    if (iterations !== null) throw new ConfigError('give --episodes or --iterations, not both');
    const batch = groups * groupSize;
    if (episodes === 0 || episodes % batch !== 0) {
      throw new ConfigError(
        `--episodes ${episodes} must be a positive multiple of groups × group size = ${batch} (whole groups only), e.g. ${Math.max(1, Math.round(episodes / batch)) * batch}`,
      );
    }
    iterations = episodes / batch;
  }
  const envOptions = jsonObjectFlag('env-options', flags['--env-options'], { example: '{"slippery":false}' });
  return actorsConfig({
    runId: flags['--run-id'] ?? `${envName}-s${seedBase}-${now.toString(36)}`,
    envName,
    envOptions,
    groups,
    groupSize,
    seedBase,
    iterations,
    firstIteration: integerFlag(flags, '--first-iteration') ?? ACTORS_DEFAULTS.firstIteration,
    maxStaleness: integerFlag(flags, '--max-staleness') ?? null,
    progressEveryMs: integerFlag(flags, '--progress-ms') ?? ACTORS_DEFAULTS.progressEveryMs,
    shard: shardFlag(flags['--shard']),
  });
}

/** `--shard i/n`: this process's share of each iteration (actorsConfig checks the numbers). */
function shardFlag(raw: string | undefined): ActorsConfig['shard'] {
  if (raw === undefined) return ACTORS_DEFAULTS.shard;
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (!match) throw new ConfigError(`--shard needs index/count, e.g. 0/2 for the first of two actor processes, got '${raw}'`);
  return { index: Number(match[1]), count: Number(match[2]) };
}

export const actorsCommand: Command = {
  summary: "roll out the policy (the learner's transformer, or random): P groups × G episodes, every step to <prefix>.env.steps",
  usage: USAGE,
  async run(args) {
    const config = configFromArgs(args);
    const flags = parseFlags(args);
    const policy = flags['--policy'] ?? 'transformer';
    if (policy !== 'transformer' && policy !== 'random') throw new ConfigError(`--policy must be transformer or random, got ${policy}`);
    const temperature = flags['--temperature'] === undefined ? 1 : Number(flags['--temperature']);
    if (!(temperature > 0)) throw new ConfigError(`--temperature must be a positive number, got ${flags['--temperature']}`);
    const trajflow = loadConfig();
    console.error(`actors: ${JSON.stringify(config)}`);
    await ensureUp(trajflow);
    const backbone = await connectBackbone(trajflow, { clientId: `trajflow-actors-${config.runId}` });
    try {
      // The transformer follows the learner's policy versions; the random policy only relabels itself.
      // --model: the learner's model settings, so version 0 (before any checkpoint) is the learner's own v0.
      const model = jsonObjectFlag('model', flags['--model'], { example: '{"positionMode":"grid"}' });
      // Versions the learner publishes on the weights topic are read from it (no shared disk needed).
      const weightsTopic = { kafka: backbone.kafka, topic: topicName(trajflow, 'policy.weights'), runId: config.runId };
      const provider =
        policy === 'transformer'
          ? await (await import('../learner/policy/actors-provider.js')).transformerProvider(config.envName, {
              temperature,
              model,
              weightsTopic,
              maxStaleness: config.maxStaleness,
            })
          : undefined;
      const run = await startActors(backbone, config, provider ? { provider } : {});
      const release = shutdownOnSignals([{ close: () => run.stop().then(() => undefined) }], { exit: false });
      try {
        const s = await run.done;
        const success = s.episodes > 0 ? ((100 * s.successes) / s.episodes).toFixed(1) : '0.0';
        console.log(
          `actors: ${s.stopped ? 'stopped' : 'done'}: run ${config.runId}, ${s.episodes} episodes, ${s.steps} steps, success ${success}%, last policy v${s.policyVersion}, last iteration ${s.iteration}`,
        );
      } finally {
        release();
        await provider?.close?.();
      }
      return 0;
    } finally {
      await backbone.close();
    }
  },
};
