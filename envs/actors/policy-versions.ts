// Following <prefix>.policy.versions for one run: every PolicyVersionEvent of the run goes to the
// provider (which loads it) and then to the staleness gate, in log order, so a blocked actor resumes
// only once the version it waited for is ready to sample with.
//
// The topic is compacted and keyed by run id, so reading it from the beginning gives the newest versions
// of every run. `caughtUp` resolves once everything that was on the topic at start has been read:
// actors that (re)join a running learner wait for it, instead of sampling with version 0 first.
import { concatMap, type Subscription } from 'rxjs';
import type { Kafka } from 'kafkajs';
import { retryRetriable } from '../../streams/retry.js';
import type { EventCodec, PolicyVersionEvent } from '../../schemas/index.js';
import { createEventConsumer, isKafkaOutage, type TopicConsumer } from '../../streams/index.js';

/** Longest wait in close() for the group join that must come before a clean stop. */
const JOIN_WAIT_ON_CLOSE_MS = 20_000;

export interface PolicyVersionFollower {
  /**
   * Resolves once the versions on the topic when following began have all been handled. (A last record
   * that cannot be decoded is skipped without a signal: callers bound the wait, see run.ts.)
   */
  readonly caughtUp: Promise<void>;
  close(): Promise<void>;
}

export interface FollowOptions {
  readonly topic: string;
  readonly runId: string;
  /** Called for each version event of the run, in order; the next waits for the returned promise. */
  readonly onVersion: (event: PolicyVersionEvent) => void | Promise<void>;
  /** Called when the stream fails (the actors keep their current version and bound). */
  readonly onError?: (error: unknown) => void;
}

export async function followPolicyVersions(kafka: Kafka, codec: EventCodec, options: FollowOptions): Promise<PolicyVersionFollower> {
  const admin = kafka.admin();
  await admin.connect();
  // The offset of the last record per partition at start (-1: the partition is empty).
  const lastAtStart = new Map<number, bigint>();
  try {
    for (const { partition, high } of await retryRetriable(() => admin.fetchTopicOffsets(options.topic))) lastAtStart.set(partition, BigInt(high) - 1n);
  } finally {
    await admin.disconnect();
  }
  // No consumer group id: an ephemeral group that commits nothing; every actor process reads it all.
  const createConsumer = (): VersionSource =>
    createEventConsumer(kafka, codec, 'policy_version', {
      topic: options.topic,
      deadLetters: 'skip',
      autoAck: true,
      fromBeginning: true,
    });
  return followFrom(lastAtStart, createConsumer, options);
}

/** What the follower needs of a TopicConsumer (an in-memory double in unit tests). */
export type VersionSource = Pick<TopicConsumer<PolicyVersionEvent>, 'events$' | 'stats' | 'close'>;

export interface FollowTiming {
  /** Wait before reconnect n (from 1): min(maxBackoffMs, baseBackoffMs · 2^(n−1)); the count restarts after a version arrives. */
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly log?: (line: string) => void;
}

/**
 * Follows the versions with consumers from `createConsumer`, starting a new one when a broker outage ends
 * the current one. The stream has no consumer group to resume from (an ephemeral group that commits
 * nothing), so kafkajs giving up on it ("Failed to find group coordinator" in a broker restart) used to
 * end it for good: the actors then never saw another version and waited at their staleness bound forever.
 * A new consumer reads the topic from the beginning again; records at or below the last offset handled
 * on their partition are skipped, so no version is handed to the provider twice (or out of order).
 */
export function followFrom(
  lastAtStart: ReadonlyMap<number, bigint>,
  createConsumer: () => VersionSource,
  options: FollowOptions,
  timing: FollowTiming = {},
): PolicyVersionFollower {
  const { baseBackoffMs = 500, maxBackoffMs = 5000, log = (line: string) => console.error(line) } = timing;
  const reportError = options.onError ?? ((e: unknown) => console.error('actors: the policy-version stream failed:', e));
  let caughtUpNow!: () => void;
  const offsetsReached = new Promise<void>((resolve) => (caughtUpNow = resolve));
  const pending = new Set([...lastAtStart].filter(([, last]) => last >= 0n).map(([partition]) => partition));
  const reached = (partition: number, offset: bigint) => {
    if (pending.has(partition) && offset >= (lastAtStart.get(partition) ?? -1n)) pending.delete(partition);
    if (pending.size === 0) caughtUpNow();
  };
  if (pending.size === 0) caughtUpNow();

  const handledUpTo = new Map<number, bigint>();
  let closing = false;
  let failures = 0;
  let joinedOnce = false;
  let consumer!: VersionSource;
  let subscription: Subscription | undefined;
  let retry: NodeJS.Timeout | undefined;
  const start = (): void => {
    const current = createConsumer();
    consumer = current;
    subscription = current.events$
      .pipe(
        concatMap(async (envelope) => {
          const offset = BigInt(envelope.offset);
          // Read again by a consumer started after an outage: handled already.
          if (offset <= (handledUpTo.get(envelope.partition) ?? -1n)) return null;
          if (envelope.value.runId === options.runId) await options.onVersion(envelope.value);
          handledUpTo.set(envelope.partition, offset);
          return { partition: envelope.partition, offset };
        }),
      )
      .subscribe({
        next: (handled) => {
          if (!handled) return;
          failures = 0;
          reached(handled.partition, handled.offset);
        },
        error: (error: unknown) => {
          if (closing || consumer !== current) return;
          if (!isKafkaOutage(error)) return reportError(error);
          failures++;
          const wait = Math.min(maxBackoffMs, baseBackoffMs * 2 ** Math.min(10, failures - 1));
          log(
            `actors: the policy-version stream lost the broker (${error instanceof Error ? error.message : String(error)}); following again in ${wait} ms, from the versions not handled yet`,
          );
          if (current.stats.rebalances > 0) joinedOnce = true;
          void current.close({ drain: false }).catch(() => undefined);
          retry = setTimeout(() => {
            if (!closing) start();
          }, wait);
        },
      });
  };
  start();
  // Closing a TopicConsumer before it has joined its group races its start (kafkajs then restarts the
  // stopped consumer forever), so close() first waits for the join (or a bound on it).
  const joined = (async () => {
    while (!joinedOnce && consumer.stats.rebalances === 0 && !closing) await new Promise((resolve) => setTimeout(resolve, 50));
  })();
  return {
    caughtUp: Promise.all([joined, offsetsReached]).then(() => undefined),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([joined, new Promise((resolve) => (timer = setTimeout(resolve, JOIN_WAIT_ON_CLOSE_MS)))]);
      clearTimeout(timer);
      closing = true;
      clearTimeout(retry);
      await consumer.close({ drain: false });
      subscription?.unsubscribe();
    },
  };
}
