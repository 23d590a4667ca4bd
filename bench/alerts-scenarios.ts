// The labelled runs of `trajflow bench alerts`: healthy runs that converge (the presets, as `trajflow train` runs
// them) and runs staged to collapse (GRPO at a high learning rate as `bench collapse` stages it; a healthy
// FrozenLake run broken mid-way by an entropy blow-up, a reward-scale bug or a learning-rate spike). What a
// scenario stages is not its label: the label is the fall rule's verdict on its success curve (alerts-score.ts).
import { TRAIN_PRESETS } from '../cli/train/presets.js';
import { ConfigError } from '../core/errors.js';
import type { EnvName } from '../envs/registry.js';
import type { IterationFault, LocalRunConfig } from '../learner/local/local-run.js';
import { TEMPLATE_COLLAPSE_DEFAULTS } from '../learner/loop/config.js';
import { COLLAPSE_DEFAULTS, collapseBenchConfig } from './collapse-flags.js';
import { collapseRunConfig } from './collapse-run.js';
import { ALGORITHMS } from './learning-algorithms.js';

export interface AlertScenario {
  readonly name: string;
  /** What the run stages; the scoring labels it by its success curve instead. */
  readonly staged: 'healthy' | 'collapse';
  readonly description: string;
  readonly config: LocalRunConfig;
  /** The update a staged fault starts at (0: the run's configuration is the fault; none for runs that stage no fault). */
  readonly onset?: number;
}

/** The iteration a staged fault starts at in a FrozenLake preset run: the preset has taken off by then. */
export const FAULT_ITERATION = 60;
const FAULTED_ITERATIONS = 100;
/** What the reward-hacking bug pays a timed-out episode: five goals' worth, so lasting beats solving. */
const TIMEOUT_BONUS = 5;
/** The slow reward bug's timeout pay grows this much per update (a goal's worth after 10), up to TIMEOUT_BONUS. */
const TIMEOUT_DRIFT = 0.1;
const HEALTHY_ITERATIONS: Partial<Record<EnvName, number>> = { FrozenLake: 120, Bandit: 40, Sokoban: 240 };

/** A run of `env`'s preset as `trajflow train` runs it (the learner's cross-scoring schedule), optionally faulted. */
function presetRun(env: EnvName, seed: number, iterations: number, faultAt?: (iteration: number) => IterationFault | undefined): LocalRunConfig {
  const preset = TRAIN_PRESETS[env]!;
  const algorithm = Object.entries(ALGORITHMS).find(([, a]) => a.estimator.name === preset.estimator)?.[1] ?? { estimator: { name: preset.estimator }, filters: [] };
  return {
    env,
    envOptions: preset.envOptions,
    iterations,
    groups: preset.groups,
    groupSize: preset.groupSize,
    seed,
    evalEvery: iterations,
    evalTasks: 32,
    processing: {
      reward: { terms: [{ kind: 'env_return' }] },
      ...algorithm,
      estimator: { ...algorithm.estimator, options: preset.estimatorOptions ?? {} },
    } as LocalRunConfig['processing'],
    optimizer: { ...preset.optimizer, learningRate: preset.learningRate },
    ...(preset.model ? { model: preset.model } : {}),
    ...(preset.loss ? { loss: preset.loss } : {}),
    templateCollapse: TEMPLATE_COLLAPSE_DEFAULTS,
    ...(faultAt ? { faultAt } : {}),
  };
}

/**
 * GRPO as `bench collapse` staged the collapse of docs/results/collapse.md: its default flags without the cures the
 * FrozenLake preset gained since (centred advantages, the entropy floor, the decaying rate), which stop it.
 */
function grpoHighLearningRate(seed: number): LocalRunConfig {
  const uncured = ['--loss', '{"centerByAction":false,"entropyCoeff":0,"entropyTarget":null}', '--optimizer', '{"schedule":"constant"}'];
  return collapseRunConfig(collapseBenchConfig(['collapse', '--seed', String(seed), ...uncured]), 'grpo');
}

const from = (start: number, fault: IterationFault) => (iteration: number) => (iteration >= start ? fault : undefined);
const between = (start: number, end: number, fault: IterationFault) => (iteration: number) => (iteration >= start && iteration < end ? fault : undefined);

/** Every scenario the bench knows, by name. */
export function allScenarios(): AlertScenario[] {
  const healthy = (env: EnvName, seed: number): AlertScenario => ({
    name: `${env.toLowerCase()}-preset-s${seed}`,
    staged: 'healthy',
    description: `${env} preset, seed ${seed}, ${HEALTHY_ITERATIONS[env]} updates`,
    config: presetRun(env, seed, HEALTHY_ITERATIONS[env]!),
  });
  const F = FAULT_ITERATION;
  const faulted = (name: string, seed: number, description: string, faultAt: (iteration: number) => IterationFault | undefined): AlertScenario => ({
    name,
    staged: 'collapse',
    description: `FrozenLake preset, seed ${seed}: ${description}`,
    config: presetRun('FrozenLake', seed, FAULTED_ITERATIONS, faultAt),
    onset: F,
  });
  return [
    ...[1, 2, 3].map((seed) => healthy('FrozenLake', seed)),
    ...[1, 2].map((seed) => healthy('Bandit', seed)),
    ...[1, 2, 3].map((seed) => healthy('Sokoban', seed)),
    ...TUNING_SEEDS.flatMap((seed) => [healthy('FrozenLake', seed), healthy('Sokoban', seed)]),
    ...[1, 2, 3].map((seed) => ({
      name: `grpo-high-lr-s${seed}`,
      staged: 'collapse' as const,
      description: `GRPO, 8 fixed FrozenLake maps, lr ${COLLAPSE_DEFAULTS.learningRate}, seed ${seed}: bench collapse's staging of collapse.md, without the cures the preset gained since`,
      config: grpoHighLearningRate(seed),
      onset: 0,
    })),
    faulted('entropy-blowup-s1', 1, `an uncapped entropy bonus of weight 2 from update ${F}`, from(F, { loss: { entropyCoeff: 2, entropyTarget: null } })),
    faulted('reward-scale-s2', 2, `rewards × 100 from update ${F}`, from(F, { rewardScale: 100 })),
    ...[1, 2, 3].map((seed) =>
      faulted(
        `reward-hack-s${seed}`,
        seed,
        `an episode cut short by the turn limit pays ${TIMEOUT_BONUS} from update ${F} (a reward bug that pays for lasting, not for the goal: reward hacking)`,
        from(F, { timeoutReward: TIMEOUT_BONUS }),
      ),
    ),
    ...[1, 2, 3].map((seed) =>
      faulted(
        `reward-drift-s${seed}`,
        seed,
        `an episode cut short by the turn limit pays ${TIMEOUT_DRIFT} more every update from ${F} (a goal's worth by ${F + 9}, up to ${TIMEOUT_BONUS}): a reward bug that creeps in, a slow collapse`,
        (i) => (i >= F ? { timeoutReward: Math.min(TIMEOUT_BONUS, TIMEOUT_DRIFT * (i - F + 1)) } : undefined),
      ),
    ),
    faulted('lr-spike-s3', 3, `the learning rate × 30 for updates ${F}–${F + 4}`, between(F, F + 5, { learningRateScale: 30 })),
    faulted('lr-ramp-s2', 2, `the learning rate × 1.15 more every update from ${F} (a schedule gone wrong: × 10 by ${F + 16})`, (i) =>
      i >= F ? { learningRateScale: 1.15 ** (i - F + 1) } : undefined,
    ),
    faulted('lr-creep-s1', 1, `the learning rate × 1.07 more every update from ${F} (a schedule gone slowly wrong: × 10 by ${F + 33})`, (i) =>
      i >= F ? { learningRateScale: 1.07 ** (i - F + 1) } : undefined,
    ),
  ];
}

/**
 * Healthy FrozenLake and Sokoban runs on seeds the benchmark does not score: a detector's thresholds are chosen on these (and
 * on synthetic series), never on the scored runs, so the benchmark's precision is not fitted to it.
 */
const TUNING_SEEDS = [4, 5, 6];
export const TUNING_SCENARIOS = TUNING_SEEDS.flatMap((seed) => [`frozenlake-preset-s${seed}`, `sokoban-preset-s${seed}`]);

/** The scenarios run by default: all but the tuning runs. */
export const DEFAULT_SCENARIOS = allScenarios()
  .map((s) => s.name)
  .filter((name) => !TUNING_SCENARIOS.includes(name));

/** The scenarios named (comma-separated), in the bench's order; unknown names are ConfigErrors. */
export function pickScenarios(names: readonly string[]): AlertScenario[] {
  const all = allScenarios();
  for (const name of names) if (!all.some((s) => s.name === name)) throw new ConfigError(`--scenarios: unknown '${name}'; choose from ${all.map((s) => s.name).join(', ')}`);
  return all.filter((s) => names.includes(s.name));
}
