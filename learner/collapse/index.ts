// RAGEN-2 template-collapse metrics of a training batch, measured by the learner every few updates.
import type { ReplyHead, TransformerModel } from '../model/transformer.js';
import { crossScore } from './cross-score.js';
import { templateCollapseMetrics, type TemplateCollapseMetrics } from './metrics.js';
import { choosePairs, type PairSource, type TurnChoice } from './pairs.js';

export { templateCollapseMetrics, templateMetricsEntries, type CrossScores, type TemplateCollapseMetrics } from './metrics.js';
export { choosePairs, generatedTurns, type ScoringPairs, type TurnChoice } from './pairs.js';
export { crossScore } from './cross-score.js';

export interface CrossScoringConfig {
  /** Replies scored (RAGEN-2's num_samples, 64 there). */
  readonly pairs: number;
  readonly turns: TurnChoice;
  readonly temperature: number;
  readonly microBatch?: number;
}

/** The metrics of `samples`, or null when they hold fewer than two distinct prompts (nothing to tell apart). */
export function measureTemplateCollapse(
  model: TransformerModel,
  head: ReplyHead,
  samples: readonly PairSource[],
  seed: number,
  config: CrossScoringConfig,
): TemplateCollapseMetrics | null {
  const pairs = choosePairs(samples, config.pairs, seed, config.turns);
  if (pairs.prompts.length < 2) return null;
  return templateCollapseMetrics(crossScore(model, head, pairs, { temperature: config.temperature, ...(config.microBatch ? { microBatch: config.microBatch } : {}) }));
}

/**
 * The learner's schedule for the metrics above: measured before update `update` when it is a multiple of
 * `every` (0: never), seeded by the run's model seed and the update, on the batch about to be trained —
 * shared by the Kafka learner and the in-process loop so that both measure the same thing.
 */
export function templateCollapseBeforeUpdate(
  model: TransformerModel,
  head: ReplyHead,
  samples: readonly PairSource[],
  at: { readonly modelSeed: number; readonly update: number },
  config: CrossScoringConfig & { readonly every: number },
): TemplateCollapseMetrics | null {
  if (config.every <= 0 || samples.length === 0 || at.update % config.every !== 0) return null;
  return measureTemplateCollapse(model, head, samples, at.modelSeed * 1_000_003 + at.update, config);
}
