// Following <prefix>.policy.versions for one run: every PolicyVersionEvent of the run goes to the
// provider (which loads it) and then to the staleness gate, in log order, so a blocked actor resumes
// only once the version it waited for is ready to sample with.
//
// The topic is compacted and keyed by run id, so reading it from the beginning gives the newest versions
// of every run. `caughtUp` resolves once everything that was on the topic at start has been read:
// actors that (re)join a running learner wait for it, instead of sampling with version 0 first.
import { concatMap } from 'rxjs';
import type { Kafka } from 'kafkajs';
import type { EventCodec, PolicyVersionEvent } from '../../schemas/index.js';
import { createEventConsumer, type TopicConsumer } from '../../streams/index.js';

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
    for (const { partition, high } of await admin.fetchTopicOffsets(options.topic)) lastAtStart.set(partition, BigInt(high) - 1n);
  } finally {
    await admin.disconnect();
  }
  let caughtUpNow!: () => void;
  const offsetsReached = new Promise<void>((resolve) => (caughtUpNow = resolve));
  const pending = new Set([...lastAtStart].filter(([, last]) => last >= 0n).map(([partition]) => partition));
  const reached = (partition: number, offset: string) => {
    if (pending.has(partition) && BigInt(offset) >= (lastAtStart.get(partition) ?? -1n)) pending.delete(partition);
    if (pending.size === 0) caughtUpNow();
  };
  if (pending.size === 0) caughtUpNow();

  // No consumer group id: an ephemeral group that commits nothing; every actor process reads it all.
  const consumer: TopicConsumer<PolicyVersionEvent> = createEventConsumer(kafka, codec, 'policy_version', {
    topic: options.topic,
    deadLetters: 'skip',
    autoAck: true,
    fromBeginning: true,
  });
  const subscription = consumer.events$
    .pipe(
      concatMap(async (envelope) => {
        if (envelope.value.runId === options.runId) await options.onVersion(envelope.value);
        return envelope;
      }),
    )
    .subscribe({
      next: (envelope) => reached(envelope.partition, envelope.offset),
      error: (error: unknown) => (options.onError ?? ((e) => console.error('actors: the policy-version stream failed:', e)))(error),
    });
  // Closing a TopicConsumer before it has joined its group races its start (kafkajs then restarts the
  // stopped consumer forever), so close() first waits for the join (or a bound on it).
  let closing = false;
  const joined = (async () => {
    while (consumer.stats.rebalances === 0 && !closing) await new Promise((resolve) => setTimeout(resolve, 50));
  })();
  return {
    caughtUp: Promise.all([joined, offsetsReached]).then(() => undefined),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([joined, new Promise((resolve) => (timer = setTimeout(resolve, JOIN_WAIT_ON_CLOSE_MS)))]);
      clearTimeout(timer);
      closing = true;
      await consumer.close({ drain: false });
      subscription.unsubscribe();
    },
  };
}
