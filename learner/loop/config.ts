// The learner process's settings, checked when built. Nested: model shape, optimisation, loss.
import { join } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import type { TrajflowConfig } from '../../core/config.js';
import { isEnvName } from '../../envs/registry.js';
import { BACKEND_CHOICES, type BackendChoice } from '../backend.js';
import { buildPolicyLossConfig, type PolicyLossConfig } from '../loss/index.js';
import { MODEL_DEFAULTS, type PolicyModelConfig } from '../model/config.js';
import { buildOptimizerConfig, type OptimizerConfig } from '../train/config.js';

export interface LearnerConfig {
  readonly runId: string;
  /** Environment whose action words form the reply vocabulary of a fresh run (a resumed run reads them from its checkpoint). */
  readonly envName: string;
  readonly model: Omit<PolicyModelConfig, 'vocabSize'>;
  readonly optimizer: OptimizerConfig;
  readonly loss: PolicyLossConfig;
  /** Train once the buffered samples hold this many tokens. Default 4096. */
  readonly batchTokens: number;
  /** …or once this many samples waited maxWaitMs. Defaults 8 and 2000 ms. These three apply to samples that name no rollout batch. */
  readonly minSamples: number;
  readonly maxWaitMs: number;
  /**
   * A rollout batch still incomplete this long after its last sample came is trained as it is (counted partial). The
   * processors write a batch's samples together, so in a healthy run they all arrive within a flush. Default 10,000 ms.
   */
  readonly batchTimeoutMs: number;
  /** The environment's options (recorded in every checkpoint, so `trajflow eval --run-id` evaluates on the run's task). Default {}. */
  readonly envOptions: Readonly<Record<string, unknown>>;
  /** Samples sampled more than this many versions ago are dropped (counted); null: no bound. Default null. */
  readonly maxStaleness: number | null;
  /** Where checkpoints go. Default <home>/checkpoints/<topicPrefix>/<runId>. */
  readonly checkpointDir: string;
  /** Checkpoints kept on disk. Default 5. */
  readonly keepCheckpoints: number;
  /** Consumer group on the samples topic. Default <prefix>.learner. */
  readonly groupId: string;
  /** Stop after this many updates in total (resumed ones included); null: run until stopped. */
  readonly maxUpdates: number | null;
  readonly backend: BackendChoice;
  /**
   * RAGEN-2 cross-scoring (template collapse: MI estimate, retrieval accuracy, MI z-score) on the batch
   * before the update, every `every` updates (0: off), over `pairs` replies; results go into the
   * learner_step metrics as 'template.*'. Defaults 10 updates, 16 pairs, 'uniform' turns (RAGEN-2: 5, 64:
   * its cost grows with pairs², which a CPU learner feels).
   */
  readonly templateCollapse: { readonly every: number; readonly pairs: number; readonly turns: 'uniform' | 'first' };
}

export const TEMPLATE_COLLAPSE_DEFAULTS: LearnerConfig['templateCollapse'] = Object.freeze({ every: 10, pairs: 16, turns: 'uniform' as const });

export type LearnerConfigInput = Partial<Omit<LearnerConfig, 'model' | 'optimizer' | 'loss' | 'templateCollapse'>> & {
  readonly templateCollapse?: Partial<LearnerConfig['templateCollapse']>;
  readonly runId: string;
  readonly model?: Partial<Omit<PolicyModelConfig, 'vocabSize'>>;
  readonly optimizer?: Partial<OptimizerConfig>;
  readonly loss?: Partial<PolicyLossConfig>;
};

export function buildLearnerConfig(trajflow: TrajflowConfig, input: LearnerConfigInput): LearnerConfig {
  const c = {
    envName: 'FrozenLake',
    batchTokens: 4096,
    minSamples: 8,
    maxWaitMs: 2000,
    batchTimeoutMs: 10_000,
    envOptions: {},
    maxStaleness: null,
    checkpointDir: join(trajflow.home, 'checkpoints', trajflow.topicPrefix, input.runId),
    keepCheckpoints: 5,
    groupId: `${trajflow.topicPrefix}.learner`,
    maxUpdates: null,
    backend: 'auto' as BackendChoice,
    ...input,
  };
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(c.runId))
    throw new ConfigError(`learner: runId=${JSON.stringify(c.runId)} must be 1-100 letters, digits, '.', '_' or '-' (set --run-id)`);
  if (!isEnvName(c.envName)) throw new ConfigError(`learner: unknown environment ${JSON.stringify(c.envName)}; set --env to a built-in environment`);
  const count = (field: 'batchTokens' | 'minSamples' | 'maxWaitMs' | 'batchTimeoutMs' | 'keepCheckpoints', min: number) => {
    if (!Number.isInteger(c[field]) || c[field] < min) throw new ConfigError(`learner.${field} must be an integer >= ${min}, got ${c[field]}`);
  };
  count('batchTokens', 1);
  count('minSamples', 1);
  count('maxWaitMs', 0);
  count('batchTimeoutMs', 1);
  if (c.envOptions === null || typeof c.envOptions !== 'object' || Array.isArray(c.envOptions))
    throw new ConfigError('learner.envOptions must be an object of option names to values (set --env-options)');
  count('keepCheckpoints', 1);
  if (c.maxStaleness !== null && (!Number.isInteger(c.maxStaleness) || c.maxStaleness < 0))
    throw new ConfigError(`learner.maxStaleness must be an integer >= 0 or null, got ${c.maxStaleness}`);
  if (c.maxUpdates !== null && (!Number.isInteger(c.maxUpdates) || c.maxUpdates < 1))
    throw new ConfigError(`learner.maxUpdates must be an integer >= 1 or null, got ${c.maxUpdates}`);
  if (!BACKEND_CHOICES.includes(c.backend)) throw new ConfigError(`learner.backend must be one of ${BACKEND_CHOICES.join(', ')}`);
  const template = { ...TEMPLATE_COLLAPSE_DEFAULTS, ...input.templateCollapse };
  for (const key of Object.keys(template)) {
    if (!(key in TEMPLATE_COLLAPSE_DEFAULTS))
      throw new ConfigError(`learner.templateCollapse.${key} is unknown; the settings are ${Object.keys(TEMPLATE_COLLAPSE_DEFAULTS).join(', ')}`);
  }
  if (!Number.isInteger(template.every) || template.every < 0)
    throw new ConfigError(`learner.templateCollapse.every must be an integer >= 0 (0 turns cross-scoring off), got ${template.every}`);
  if (!Number.isInteger(template.pairs) || template.pairs < 2) throw new ConfigError(`learner.templateCollapse.pairs must be an integer >= 2, got ${template.pairs}`);
  if (template.turns !== 'uniform' && template.turns !== 'first')
    throw new ConfigError(`learner.templateCollapse.turns must be 'uniform' or 'first', got ${JSON.stringify(template.turns)}`);
  return Object.freeze({
    ...c,
    templateCollapse: Object.freeze(template),
    model: Object.freeze({ ...MODEL_DEFAULTS, ...input.model }),
    optimizer: buildOptimizerConfig(input.optimizer),
    loss: buildPolicyLossConfig(input.loss),
  });
}
