// Following <prefix>.policy.versions for one run: every PolicyVersionEvent of the run goes to the
// provider (which loads it) and then to the staleness gate, in log order, so a blocked actor resumes
// only once the version it waited for is ready to sample with.
//
// The topic is compacted and keyed by run id, so reading it from the beginning gives the newest versions
// of every run. `caughtUp` resolves once everything that was on the topic at start has been read:
// actors that (re)join a running learner wait for it, instead of sampling with version 0 first.
import { concatMap, type Subscription } from 'rxjs';
import type { Kafka } from 'kafkajs';
import { retryRetriable } from '../streams/retry.js';
import type { EventCodec, PolicyVersionEvent } from '../schemas/index.js';
import { createEventConsumer, type Envelope, type TopicConsumer } from '../streams/index.js';
import { type Backoff, type FollowState, handledAlready, initialFollowState, isCaughtUp, recordHandled, streamFailed, versionReached } from './version-follow.js';

/** Longest wait in close() for the group join that must come before a clean stop. */
const JOIN_WAIT_ON_CLOSE_MS = 20_000;

export interface PolicyVersionFollower {
  /**
   * Resolves once the versions on the topic when following began have all been handled. (A last record
   * that cannot be decoded is skipped without a signal: callers bound the wait, see start-actors.ts.)
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
  return new VersionFollower(lastAtStart, createConsumer, options, timing);
}

/** The I/O around version-follow.ts: one consumer at a time, restarted after an outage, closed once joined. */
class VersionFollower implements PolicyVersionFollower {
  readonly caughtUp: Promise<void>;
  private state: FollowState;
  private readonly createConsumer: () => VersionSource;
  private readonly options: FollowOptions;
  private readonly backoff: Backoff;
  private readonly log: (line: string) => void;
  private readonly reportError: (error: unknown) => void;
  private readonly joined: Promise<void>;
  private caughtUpNow!: () => void;
  private closing = false;
  private joinedOnce = false;
  private consumer!: VersionSource;
  private subscription: Subscription | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(lastAtStart: ReadonlyMap<number, bigint>, createConsumer: () => VersionSource, options: FollowOptions, timing: FollowTiming) {
    const { baseBackoffMs = 500, maxBackoffMs = 5000, log = (line: string) => console.error(line) } = timing;
    this.createConsumer = createConsumer;
    this.options = options;
    this.backoff = { baseBackoffMs, maxBackoffMs };
    this.log = log;
    this.reportError = options.onError ?? ((e: unknown) => console.error('actors: the policy-version stream failed:', e));
    this.state = initialFollowState(lastAtStart);
    const offsetsReached = new Promise<void>((resolve) => (this.caughtUpNow = resolve));
    if (isCaughtUp(this.state)) this.caughtUpNow();
    this.start();
    this.joined = this.joinedOrClosing();
    this.caughtUp = Promise.all([this.joined, offsetsReached]).then(() => undefined);
  }

  private start(): void {
    const current = this.createConsumer();
    this.consumer = current;
    this.subscription = current.events$.pipe(concatMap((envelope) => this.handle(envelope))).subscribe({
      next: (handled) => {
        if (!handled) return;
        this.state = versionReached(this.state, handled.partition, handled.offset);
        if (isCaughtUp(this.state)) this.caughtUpNow();
      },
      error: (error: unknown) => this.failed(current, error),
    });
  }

  /** Hands a version of the run on, once; null for a record handled already. */
  private async handle(envelope: Envelope<PolicyVersionEvent>): Promise<{ partition: number; offset: bigint } | null> {
    const offset = BigInt(envelope.offset);
    if (handledAlready(this.state, envelope.partition, offset)) return null;
    if (envelope.value.runId === this.options.runId) await this.options.onVersion(envelope.value);
    this.state = recordHandled(this.state, envelope.partition, offset);
    return { partition: envelope.partition, offset };
  }

  private failed(current: VersionSource, error: unknown): void {
    if (this.closing || this.consumer !== current) return;
    const next = streamFailed(this.state, error, this.backoff);
    this.state = next.state;
    if (next.failure.kind === 'report') {
      this.reportError(error);
      return;
    }
    this.log(next.failure.line);
    if (current.stats.rebalances > 0) this.joinedOnce = true;
    void current.close({ drain: false }).catch(() => undefined);
    this.retry = setTimeout(() => {
      if (!this.closing) this.start();
    }, next.failure.waitMs);
  }

  // Closing a TopicConsumer before it has joined its group races its start (kafkajs then restarts the
  // stopped consumer forever), so close() first waits for the join (or a bound on it).
  private async joinedOrClosing(): Promise<void> {
    while (!this.joinedOnce && this.consumer.stats.rebalances === 0 && !this.closing) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.joined, new Promise((resolve) => (timer = setTimeout(resolve, JOIN_WAIT_ON_CLOSE_MS)))]);
    clearTimeout(timer);
    this.closing = true;
    clearTimeout(this.retry);
    await this.consumer.close({ drain: false });
    this.subscription?.unsubscribe();
  }
}
