// The flags of `trajflow bench collapse` and their defaults, read into the config both runs share.
import { ConfigError } from '../core/errors.js';
import { TRAIN_PRESETS, type TrainPreset } from '../cli/train/presets.js';
import { parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import type { EnvName } from '../envs/registry.js';
import { ALGORITHMS } from './learning-algorithms.js';
import { runOverrides } from './run-overrides.js';

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

export type RunLabel = 'collapse' | 'stable';

export interface CollapseBenchConfig extends ReturnType<typeof runOverrides> {
  readonly env: EnvName;
  readonly preset: TrainPreset;
  readonly algorithms: Record<RunLabel, string>;
  readonly runs: RunLabel[];
  readonly tasks: number;
  readonly iterations: number;
  readonly seed: number;
  /** Cross-scoring before every `templateEvery`-th update; 0: off. */
  readonly templateEvery: number;
  readonly groups: number;
  readonly groupSize: number;
}

/** The config of `bench collapse`'s args (args[0] is `collapse`); unknown flags and values are ConfigErrors. */
export function collapseBenchConfig(args: readonly string[]): CollapseBenchConfig {
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
  const overrides = runOverrides(f, preset, D);
  return { env, preset, algorithms, runs: runs as RunLabel[], tasks, iterations, seed, templateEvery, groups, groupSize, ...overrides };
}
