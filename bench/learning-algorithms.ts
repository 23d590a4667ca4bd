// The algorithms `bench learning` compares and `bench collapse` pits against each other: an estimator plus filters.
import type { ProcessingConfig } from '../processors/pipeline/process-batch.js';

/** The algorithms of the comparison: estimator plus filters. */
export const ALGORITHMS: Record<string, Pick<ProcessingConfig, 'estimator' | 'filters'>> = {
  grpo: { estimator: { name: 'grpo' }, filters: [] },
  'dr-grpo': { estimator: { name: 'dr_grpo' }, filters: [] },
  gigpo: { estimator: { name: 'gigpo' }, filters: [] },
  'starpo-s': { estimator: { name: 'starpo' }, filters: [{ name: 'starpo_s_variance' }] },
  // Batch-whitened returns need no group of rollouts per task, so every episode can play its own task.
  'reinforce++': { estimator: { name: 'reinforce_plus_plus' }, filters: [] },
};
