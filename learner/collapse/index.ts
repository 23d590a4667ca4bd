// RAGEN-2 template-collapse metrics of a training batch, measured by the learner every few updates.
import type { ReplyHead, TransformerModel } from '../model/transformer.js';
import { crossScore } from './cross-score.js';
import { templateCollapseMetrics, type TemplateCollapseMetrics } from './metrics.js';
import { choosePairs, type PairSource, type TurnChoice } from './pairs.js';

export { templateCollapseMetrics, templateMetricsEntries, type CrossScores, type TemplateCollapseMetrics } from './metrics.js';
export { choosePairs, generatedTurns, type ScoringPairs, type TurnChoice } from './pairs.js';
export { crossScore } from './cross-score.js';

export interface TemplateCollapseSettings {
  /** Replies scored (RAGEN-2's num_samples, 64 there). */
  readonly pairs: number;
  readonly turns: TurnChoice;
  readonly temperature: number;
  readonly microBatch?: number;
}

/** The metrics of `samples`, or null when they hold fewer than two distinct prompts (nothing to tell apart). */
export function measureTemplateCollapse(model: TransformerModel, head: ReplyHead, samples: readonly PairSource[], seed: number, settings: TemplateCollapseSettings): TemplateCollapseMetrics | null {
  const pairs = choosePairs(samples, settings.pairs, seed, settings.turns);
  if (pairs.prompts.length < 2) return null;
  return templateCollapseMetrics(crossScore(model, head, pairs, { temperature: settings.temperature, ...(settings.microBatch ? { microBatch: settings.microBatch } : {}) }));
}
