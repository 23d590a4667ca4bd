export { mean, unbiasedStd, populationStd, inGroupStd } from './moments.js';
export { passAtK, passHatK } from './pass-at-k.js';
export { groupStats, isSuccessDefault, type GroupStats, type RolloutStatsOptions } from './group-stats.js';
export { batchStats, type BatchStats, type BatchStatsInput } from './batch-stats.js';
