// The filters by name with typed options, for configuration: `groupFilter('starpo_s_variance', { ratio: 0.25 })`.
import { ConfigError } from '../../core/errors.js';
import { dynamicSamplingFilter, type DynamicSamplingOptions } from './dynamic-sampling.js';
import { checkSnrFilterOptions, snrFilter, type SnrFilterOptions } from './snr-filter.js';
import type { GroupFilter } from './types.js';
import { checkVarianceFilterOptions, varianceFilter, type VarianceFilterOptions } from './variance-filter.js';

export interface FilterOptionsByName {
  dynamic_sampling: DynamicSamplingOptions;
  starpo_s_variance: VarianceFilterOptions;
  ragen2_snr_top_p: SnrFilterOptions;
}

export type FilterName = keyof FilterOptionsByName;

export const filterNames: readonly FilterName[] = ['dynamic_sampling', 'starpo_s_variance', 'ragen2_snr_top_p'];

/** A configured filter, its options checked now (ConfigError) rather than on the first batch. */
export function groupFilter<N extends FilterName>(name: N, options: FilterOptionsByName[N] = {}): GroupFilter {
  switch (name) {
    case 'dynamic_sampling':
      return (groups) => dynamicSamplingFilter(groups, options as DynamicSamplingOptions);
    case 'starpo_s_variance':
      checkVarianceFilterOptions(options as VarianceFilterOptions);
      return (groups) => varianceFilter(groups, options as VarianceFilterOptions);
    case 'ragen2_snr_top_p':
      checkSnrFilterOptions(options as SnrFilterOptions);
      return (groups) => snrFilter(groups, options as SnrFilterOptions);
    default:
      throw new ConfigError(`unknown group filter '${String(name)}'; use one of ${filterNames.join(', ')}.`);
  }
}
