// `trajflow train`'s config, from its flags (pure): the environment's preset (presets.ts) with the flags over it.
// Every value is checked here, with a message that says what to pass; command.ts only starts the parts.
import { ConfigError } from '../../core/errors.js';
import { taskSeedBase } from '../../envs/seeds.js';
import { nonNegativeInt, numberFlag, positiveInt } from '../../infra/cli/flags.js';
import { TRAIN_PRESETS, type TrainPreset } from './presets.js';

export const TRAIN_FLAGS = [
  '--env',
  '--run-id',
  '--estimator',
  '--filter',
  '--updates',
  '--groups',
  '--group-size',
  '--lr',
  '--max-staleness',
  '--port',
  '--env-options',
  '--seed',
  '--eval-every',
  '--eval-tasks',
  '--gateway',
  '--actors',
] as const;
export type TrainFlags = Partial<Record<(typeof TRAIN_FLAGS)[number], string>>;

export interface TrainConfig {
  readonly env: string;
  readonly preset: TrainPreset;
  readonly estimator: string;
  readonly runId: string;
  readonly groups: number;
  readonly groupSize: number;
  readonly lr: number;
  /** The bound as the actors' and the learner's flag. */
  readonly maxStaleness: string;
  /** The environment's options as JSON, the same for the actors and the learner. */
  readonly envOptions: string;
  readonly seed: number;
  /** The first training task's seed (seed·1,000,000). */
  readonly taskSeeds: number;
  readonly evalEvery: number;
  readonly evalTasks: number;
  readonly port: string;
  readonly filters: readonly string[];
  /** --updates as given (the learner's flag), checked by updatesOf. */
  readonly updatesFlag: string | undefined;
  /** --gateway: the port of an OpenAI-compatible gateway in front of the run's policy (null: no gateway). */
  readonly gatewayPort: number | null;
  /** --actors off: no built-in actors (the run's steps come from agents calling the gateway). */
  readonly actors: boolean;
}

export function buildTrainConfig(f: TrainFlags): TrainConfig {
  const env = f['--env'] ?? 'FrozenLake';
  const preset = TRAIN_PRESETS[env];
  if (!preset)
    throw new ConfigError(
      `--env ${env}: trajflow train knows ${Object.keys(TRAIN_PRESETS).join(', ')}; for another environment start the parts yourself (trajflow actors|processors|learner)`,
    );
  const estimator = f['--estimator'] ?? preset.estimator;
  const runId = f['--run-id'] ?? `train-${env}-${estimator}`;
  const groups = positiveInt('groups', f['--groups'], preset.groups);
  const groupSize = positiveInt('group-size', f['--group-size'], preset.groupSize);
  const lr = numberFlag('lr', f['--lr'], { positive: true }) ?? preset.learningRate;
  // Every sample trained is at most this many versions behind the learner (docs/concepts/versions-and-staleness.md).
  // Default 0, on-policy: reproducible, and the real path is the in-process loop update for update, bit for bit;
  // 1 lets the actors sample the next batch while the learner trains (more updates per second), but which version
  // samples a batch then depends on timing (docs/results/learning.md).
  const maxStaleness = String(nonNegativeInt('max-staleness', f['--max-staleness'], 0));
  const envOptions = f['--env-options'] ?? JSON.stringify(preset.envOptions);
  // The run seed: the model's initial weights and the training tasks (seed·1,000,000 on), as the in-process loop
  // (`trajflow bench learning`) seeds them, so the same seed gives the same run on both paths.
  const seed = nonNegativeInt('seed', f['--seed'], 1);
  if (seed >= 1000) throw new ConfigError(`--seed ${seed}: a run seed is below 1000 (its tasks start at seed·1,000,000)`);
  // Held-out evaluation every this many versions (0: none), by the evaluator part, off the learner's path.
  const evalEvery = nonNegativeInt('eval-every', f['--eval-every'], 10);
  const evalTasks = positiveInt('eval-tasks', f['--eval-tasks'], 100);
  const filters = f['--filter'] ? [f['--filter']] : preset.filters;
  // An LLM agent's calls become the run's steps through the gateway (docs/guides/llm-agents.md), beside the
  // built-in actors' or instead of them.
  const gatewayPort = f['--gateway'] === undefined ? null : positiveInt('gateway', f['--gateway'], 0);
  if (gatewayPort !== null && gatewayPort > 65535) throw new ConfigError(`--gateway ${gatewayPort}: a port is 1–65535`);
  const actorsFlag = f['--actors'] ?? 'on';
  if (actorsFlag !== 'on' && actorsFlag !== 'off') throw new ConfigError(`--actors ${actorsFlag}: say on (the default) or off`);
  if (actorsFlag === 'off' && gatewayPort === null) throw new ConfigError('--actors off leaves the run without steps: add --gateway PORT so that agents calling it make them');
  return {
    env,
    preset,
    estimator,
    runId,
    groups,
    groupSize,
    lr,
    maxStaleness,
    envOptions,
    seed,
    taskSeeds: taskSeedBase(seed),
    evalEvery,
    evalTasks,
    port: f['--port'] ?? '18080',
    filters,
    updatesFlag: f['--updates'],
    gatewayPort,
    actors: actorsFlag === 'on',
  };
}

/** The updates asked for (the progress bar's total, the evaluator's final version); undefined: until stopped. */
export function updatesOf(s: TrainConfig): number | undefined {
  return s.updatesFlag === undefined ? undefined : positiveInt('updates', s.updatesFlag, 1);
}
