import type { ProcessingConfig } from '../../../processors/pipeline/process-batch.js';

/** GRPO on the environment return, no filters: every complete group becomes samples. */
export const testProcessing: ProcessingConfig = {
  reward: { terms: [{ kind: 'env_return' }] },
  estimator: { name: 'grpo' },
  filters: [],
};
