export type { DroppedGroup, FilterResult, GroupFilter } from './types.js';
export { dynamicSamplingFilter, DYNAMIC_SAMPLING, type DynamicSamplingOptions } from './dynamic-sampling.js';
export { varianceFilter, checkVarianceFilterOptions, VARIANCE_FILTER, type VarianceFilterOptions } from './variance-filter.js';
export { snrFilter, checkSnrFilterOptions, SNR_FILTER, type SnrFilterOptions } from './snr-filter.js';
export { applyFilters } from './chain.js';
export { groupFilter, filterNames, type FilterName, type FilterOptionsByName } from './registry.js';
