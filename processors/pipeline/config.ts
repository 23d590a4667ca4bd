// The processors' config: their options resolved, defaults filled in, intervals checked, the topics named
// under the project config's prefix. Pure: processor.ts starts from this config and only does the I/O.
import { topicName, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import type { EmitterTopics } from '../exactly-once/transactional-emitter.js';
import type { BatchStats } from '../stats/batch-stats.js';
import type { ProcessingConfig } from './process-batch.js';

export interface ProcessorsOptions {
  /** Consumer group of the processors (all instances share it); default `<topic prefix>.processors`. */
  readonly consumerGroupId?: string;
  readonly processing: ProcessingConfig;
  readonly groupSize?: number;
  readonly minGroupSize?: number;
  readonly idleTimeoutMs?: number;
  readonly groupTimeoutMs?: number;
  /**
   * A group whose steps announce no size (`info.groupSize`) closes this long after its latest episode ended,
   * when none of its episodes is open (default 3,000 ms; docs/design/group-completion.md).
   */
  readonly groupIdleCloseMs?: number;
  /**
   * A rollout batch (what filters and batch estimators see together) closes batchWindowMs after its first
   * group (default 20) or when it holds maxBatchGroups groups (default 64), whichever comes first
   * (rollout-batches.ts). Set maxBatchGroups to the actors' groups per iteration for RAGEN's batches, with a
   * window long enough to collect them (trajflow train: 5 s). The default window is latency every group
   * pays (on average half of it), so it is short: a shorter window lowers the latency at the cost of more,
   * smaller transactions (docs/results/processors.md).
   */
  readonly batchWindowMs?: number;
  readonly maxBatchGroups?: number;
  /** The batch of an actors' iteration (its groups name it) closes after this long without a new group of it; default 10,000 ms. */
  readonly iterationIdleMs?: number;
  /** Output is written as soon as it is queued; this interval (default 100) also writes mark releases. */
  readonly flushIntervalMs?: number;
  /**
   * Write output as soon as it is queued (default true). false: only every flushIntervalMs, as before —
   * for tests that stage one transaction holding everything a batch produced.
   */
  readonly writeAsQueued?: boolean;
  /** Topic names (defaults: the config's prefix with env.steps, samples, trajectories, processors.state). */
  readonly topics?: Partial<{ steps: string; samples: string; trajectories: string; rolloutStats: string; state: string; deadLetters: string }>;
  readonly onBatch?: (stats: BatchStats) => void;
  /**
   * Fault tests only: every transaction waits at its commit until handle.emitter.commitHold.release(). The
   * producers run on a worker thread, so a test cannot wrap them; it stages a slow commit this way.
   */
  readonly holdCommits?: boolean;
  /**
   * A transaction (or producer hand-over) the transaction worker has not finished after this long fails the
   * pipeline, which restarts from the committed offsets (default 120,000; transaction-client.ts says why).
   */
  readonly transactionDeadlineMs?: number;
  /** A rebalance's setup still running after this long fails the pipeline, which restarts (default 180,000; processor.ts). */
  readonly setupDeadlineMs?: number;
  /** Where the processors' own notices go (the stall report); default stderr. */
  readonly log?: (line: string) => void;
}

/** How long a group that announces no size waits after its latest episode ended (none open) before it closes. */
export const DEFAULT_GROUP_IDLE_CLOSE_MS = 3_000;

/** ProcessorsOptions with every default filled in (processing, onBatch and holdCommits stay on the options). */
export interface ProcessorsConfig {
  readonly consumerGroupId: string;
  readonly groupSize: number;
  readonly minGroupSize: number;
  readonly idleTimeoutMs: number;
  readonly groupTimeoutMs: number;
  readonly groupIdleCloseMs: number;
  readonly batchWindowMs: number;
  readonly maxBatchGroups: number;
  /** undefined: rollout-batches.ts's own default. */
  readonly iterationIdleMs: number | undefined;
  readonly flushIntervalMs: number;
  readonly writeAsQueued: boolean;
  readonly topics: EmitterTopics;
}

/** Resolves the options against the config; ConfigError on a flush interval or batch window that is not > 0. */
export function buildProcessorsConfig(config: Pick<TrajflowConfig, 'topicPrefix'>, options: Omit<ProcessorsOptions, 'processing'>): ProcessorsConfig {
  const flushIntervalMs = options.flushIntervalMs ?? 100;
  const batchWindowMs = options.batchWindowMs ?? 20;
  if (!(flushIntervalMs > 0) || !(batchWindowMs > 0)) {
    throw new ConfigError('flushIntervalMs and batchWindowMs must be > 0 (milliseconds)');
  }
  const groupIdleCloseMs = options.groupIdleCloseMs ?? DEFAULT_GROUP_IDLE_CLOSE_MS;
  if (!(groupIdleCloseMs > 0)) throw new ConfigError(`groupIdleCloseMs must be > 0 (milliseconds; --group-idle-close-ms), got ${groupIdleCloseMs}`);
  const topic = (given: string | undefined, name: string) => given ?? topicName(config, name);
  return {
    consumerGroupId: options.consumerGroupId ?? `${config.topicPrefix}.processors`,
    groupSize: options.groupSize ?? 8,
    minGroupSize: options.minGroupSize ?? 2,
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    groupTimeoutMs: options.groupTimeoutMs ?? 300_000,
    groupIdleCloseMs,
    batchWindowMs,
    maxBatchGroups: options.maxBatchGroups ?? 64,
    iterationIdleMs: options.iterationIdleMs,
    flushIntervalMs,
    writeAsQueued: options.writeAsQueued ?? true,
    topics: {
      steps: topic(options.topics?.steps, 'env.steps'),
      samples: topic(options.topics?.samples, 'samples'),
      trajectories: topic(options.topics?.trajectories, 'trajectories'),
      rolloutStats: topic(options.topics?.rolloutStats, 'rollout.stats'),
      state: topic(options.topics?.state, 'processors.state'),
      deadLetters: topic(options.topics?.deadLetters, 'deadletter'),
    },
  };
}
