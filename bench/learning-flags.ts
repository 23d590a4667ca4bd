// The flags of `trajflow bench learning` (the in-process path), read into the config every (algorithm, seed) run shares.
import { ConfigError } from '../core/errors.js';
import { TRAIN_PRESETS, type TrainPreset } from '../cli/train/presets.js';
import { jsonObjectFlag, parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import type { EnvName } from '../envs/registry.js';
import { ALGORITHMS } from './learning-algorithms.js';
import { runOverrides } from './run-overrides.js';

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

export type RunOverrides = ReturnType<typeof runOverrides>;

export interface LearningBenchConfig extends RunOverrides {
  readonly env: EnvName;
  readonly preset: TrainPreset;
  readonly envOptions: Record<string, unknown>;
  readonly algorithms: string[];
  readonly seeds: number[];
  readonly envSteps: number;
  readonly groups: number;
  readonly groupSize: number;
  readonly evalTasks: number;
  readonly evalEvery: number;
  /** Sampled trials per held-out task for pass@1 beside greedy success (0: greedy only). */
  readonly evalSamples: number;
  readonly diagnose: boolean;
}

/** The config of `bench learning`'s args (args[0] is `learning`); unknown flags and values are ConfigErrors. */
export function learningBenchConfig(args: readonly string[]): LearningBenchConfig {
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
  const evalSamples = f['--eval-samples'] === undefined ? 0 : positiveInt('eval-samples', f['--eval-samples'], 1);
  const overrides = runOverrides(f, preset, {
    learningRate: preset.learningRate,
    epochs: preset.optimizer?.epochs ?? 4,
    minibatches: preset.optimizer?.minibatches ?? 4,
  });
  const envOptions = { ...preset.envOptions, ...jsonObjectFlag('env-options', f['--env-options'], { example: '{"distanceShaping":1}' }) };
  const diagnose = args.includes('--diagnose');
  return { env, preset, envOptions, algorithms, seeds, envSteps, groups, groupSize, evalTasks, evalEvery, evalSamples, ...overrides, diagnose };
}
