// What start-detectors.ts starts from: the detectors' options resolved to the consumer group and the topics
// read and written (the detectors' thresholds are config.ts). Pure: start-detectors.ts only does the I/O.
import { topicName, type TrajflowConfig } from '../core/config.js';
import type { CollapseAlertEvent } from '../schemas/index.js';
import { readsTrajectories, type DetectorsConfig } from './config.js';

export interface DetectorsOptions {
  /** Consumer group; default `<prefix>.detectors`, or `<prefix>.detectors.<runId>` with runId. */
  readonly consumerGroupId?: string;
  /** Watch one run only (events of other runs are acknowledged and ignored). */
  readonly runId?: string;
  /** Topic names (defaults: the config's prefix with learner.steps, rollout.stats, trajectories, alerts). */
  readonly topics?: Partial<DetectorsTopics>;
  /** Rebuild the detectors' state from the committed part of the topics before consuming (default true). */
  readonly rebuild?: boolean;
  readonly maxInFlight?: number;
  readonly commitIntervalMs?: number;
  readonly sessionTimeoutMs?: number;
  /** Called for every alert once the broker has it. */
  readonly onAlert?: (alert: CollapseAlertEvent) => void;
}

export interface DetectorsTopics {
  readonly learnerSteps: string;
  readonly rolloutStats: string;
  readonly trajectories: string;
  readonly alerts: string;
}

export interface DetectorsStartConfig {
  readonly groupId: string;
  readonly topics: DetectorsTopics;
  /** What the detectors read: learner steps and rollout statistics, and trajectories only when a detector of them is on. */
  readonly inputTopics: readonly string[];
}

export function buildDetectorsStartConfig(config: Pick<TrajflowConfig, 'topicPrefix'>, detectors: DetectorsConfig, options: DetectorsOptions): DetectorsStartConfig {
  const prefix = config.topicPrefix;
  const groupId = options.consumerGroupId ?? (options.runId === undefined ? `${prefix}.detectors` : `${prefix}.detectors.${options.runId}`);
  const topics: DetectorsTopics = {
    learnerSteps: options.topics?.learnerSteps ?? topicName(config, 'learner.steps'),
    rolloutStats: options.topics?.rolloutStats ?? topicName(config, 'rollout.stats'),
    trajectories: options.topics?.trajectories ?? topicName(config, 'trajectories'),
    alerts: options.topics?.alerts ?? topicName(config, 'alerts'),
  };
  const inputTopics = [topics.learnerSteps, topics.rolloutStats, ...(readsTrajectories(detectors) ? [topics.trajectories] : [])];
  return { groupId, topics, inputTopics };
}
