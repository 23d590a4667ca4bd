// One rollout batch of groups in, training samples out: reward → filters → advantages → samples, with
// every dropped group accounted for. Pure (no Kafka, no clock), so the same groups always give the same
// samples — what replaying the steps with today's settings relies on.
//
// Filters and batch-scope estimators (StarPO-S keeps the top fraction of a batch's groups; REINFORCE++
// whitens over the batch) need several groups at once, hence batches rather than single groups.
import type { TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { computeAdvantages, type EstimatorName, type EstimatorOptions } from '../advantages/registry.js';
import { applyFilters } from '../filters/chain.js';
import { groupFilter, type FilterName, type FilterOptionsByName } from '../filters/registry.js';
import type { DroppedGroup } from '../filters/types.js';
import { scoreGroup, type Group } from '../group.js';
import { buildRewardFn } from '../rewards/index.js';
import type { RewardSpec } from '../rewards/types.js';
import type { SampleAdvantages } from '../samples/index.js';
import { planSample } from '../samples/planned-sample.js';
import type { Tokenizer } from '../../tokenizer/contract.js';
import { batchStats, type BatchStats } from '../stats/batch-stats.js';
import { mean, unbiasedStd } from '../stats/moments.js';
import { batchIdOf } from './rollout-stats-events.js';

export interface ProcessingConfig<N extends EstimatorName = EstimatorName> {
  readonly reward: RewardSpec;
  readonly estimator: { readonly name: N; readonly options?: EstimatorOptions<N> };
  readonly filters: readonly { readonly name: FilterName; readonly options?: FilterOptionsByName[FilterName] }[];
  readonly maxContextTokens?: number;
  readonly tokenizer?: Tokenizer;
  /** k values for pass@k / pass^k in the batch statistics. */
  readonly ks?: readonly number[];
}

export interface RawGroup {
  readonly groupId: string;
  readonly trajectories: readonly TrajectoryEvent[];
}

export interface BatchOutput {
  readonly samples: TrainingSampleEvent[];
  readonly keptGroupIds: string[];
  readonly dropped: DroppedGroup[];
  readonly stats: BatchStats;
}

/** Checks the configuration once (ConfigError on a bad estimator, filter or reward) and returns the batch step. */
export function batchProcessor(config: ProcessingConfig): (groups: readonly RawGroup[]) => BatchOutput {
  const rewardFn = buildRewardFn(config.reward);
  const filters = config.filters.map((f) => groupFilter(f.name, f.options ?? {}));
  const ks = config.ks ?? [1, 4];
  return (raw) => {
    const scored: Group[] = raw.map((g) => scoreGroup(g.groupId, [...g.trajectories], rewardFn));
    const { kept, dropped } = applyFilters(scored, filters);
    const advantages = kept.length === 0 ? [] : computeAdvantages(config.estimator.name, kept, config.estimator.options as never);
    const samples: TrainingSampleEvent[] = [];
    kept.forEach((group, g) => {
      const totals = group.rewards.map((r) => r.total);
      const groupInfo = { size: totals.length, rewardMean: mean(totals), rewardStd: unbiasedStd(totals) };
      const groupAdvantages = advantages[g]!;
      group.trajectories.forEach((trajectory, i) => {
        const adv: SampleAdvantages = groupAdvantages.perTrajectory
          ? { level: 'trajectory', advantage: groupAdvantages.perTrajectory[i]! }
          : { level: 'step', stepAdvantages: groupAdvantages.perStep[i]! };
        samples.push(
          // planSample: buildSample's sample, planned when the steps are WireSteps (written from their bytes).
          planSample(trajectory, adv, {
            estimator: config.estimator.name,
            group: groupInfo,
            reward: group.rewards[i]!.total,
            ...(config.maxContextTokens === undefined ? {} : { maxContextTokens: config.maxContextTokens }),
            ...(config.tokenizer === undefined ? {} : { tokenizer: config.tokenizer }),
          }),
        );
      });
    });
    // Every sample names its batch and the batch's sample count: the learner trains the batch in one update once
    // it holds all of them (docs: versions follow data).
    if (samples.length > 0) {
      const batch = { batchId: batchIdOf(raw.map((g) => g.groupId)), iteration: iterationOf(raw), samples: samples.length };
      for (const sample of samples) sample.batch = batch;
    }
    return {
      samples,
      keptGroupIds: kept.map((g) => g.groupId),
      dropped,
      stats: batchStats({ groups: scored, dropped }, { ks: [...ks] }),
    };
  };
}

/** The actors' iteration all the batch's trajectories name (trajectory metrics.iteration), else -1. */
function iterationOf(groups: readonly RawGroup[]): number {
  let iteration: number | undefined;
  for (const group of groups) {
    for (const trajectory of group.trajectories) {
      const named = trajectory.metrics.iteration;
      if (named === undefined || (iteration !== undefined && named !== iteration)) return -1;
      iteration = named;
    }
  }
  return iteration ?? -1;
}
