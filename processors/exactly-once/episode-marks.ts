// Which episodes this consumer group has already turned into output — the state that makes the
// processors' output exactly-once across crashes and rebalances.
//
// Offsets are committed only up to a partition's first unfinished step, so after a restart the steps of
// episodes that were already emitted (their group finished while an older group was still open) are
// read again. Each emitted or dropped episode is therefore marked in a compacted topic, in the same
// Kafka transaction as its outputs and the offsets. A restarted (or newly assigned) processor reads the
// marks first and skips, acknowledging, every step of a marked episode. A mark is deleted (tombstone)
// once the committed offset of its partition has passed the episode's last step: it can no longer be
// read again, so the topic stays small.
// Steps that could not be decoded are marked the same way, by their position ('dead_letter'): their dead
// letter is written in the transaction of the mark, so a message read again is not dead-lettered twice.
import type { Kafka } from 'kafkajs';
import type { CommitPosition } from '../../streams/offset-tracker.js';
import { createReplay } from '../../streams/replay.js';
import { isKafkaOutage } from '../../streams/topic-consumer.js';

/** How long a reload of the marks keeps retrying a broker outage (the clients' own budget is ≈ 100 s). */
const RELOAD_OUTAGE_BUDGET_MS = 120_000;

export interface EpisodeMark {
  readonly key: string;
  readonly topic: string;
  readonly partition: number;
  /** Highest offset of the episode's steps. */
  readonly maxOffset: string;
  readonly status: 'emitted' | 'dropped' | 'dead_letter';
}

/** A mark's key: consumer group, run and episode (episodes ids are unique within a run). */
export function episodeMarkKey(consumerGroupId: string, runId: string, episodeId: string): string {
  return `${consumerGroupId}|${runId}|${episodeId}`;
}

/** A dead letter's mark key: consumer group and the rejected message's position (five fields, unlike an episode's three). */
export function deadLetterMarkKey(consumerGroupId: string, topic: string, partition: number, offset: string): string {
  return `${consumerGroupId}|#dead-letter|${topic}|${partition}|${offset}`;
}

export class EpisodeMarks {
  private readonly marks = new Map<string, EpisodeMark>();

  constructor(readonly consumerGroupId: string) {}

  get size(): number {
    return this.marks.size;
  }

  has(runId: string, episodeId: string): boolean {
    return this.marks.has(episodeMarkKey(this.consumerGroupId, runId, episodeId));
  }

  hasDeadLetter(topic: string, partition: number, offset: string): boolean {
    return this.marks.has(deadLetterMarkKey(this.consumerGroupId, topic, partition, offset));
  }

  add(mark: EpisodeMark): void {
    this.marks.set(mark.key, mark);
  }

  /** Removes and returns the keys whose episode lies wholly below the committed positions. */
  release(positions: readonly CommitPosition[]): string[] {
    const committed = new Map(positions.map((p) => [`${p.topic}/${p.partition}`, p.offset]));
    const released: string[] = [];
    for (const [key, mark] of this.marks) {
      const position = committed.get(`${mark.topic}/${mark.partition}`);
      if (position !== undefined && BigInt(mark.maxOffset) < position) {
        this.marks.delete(key);
        released.push(key);
      }
    }
    return released;
  }

  /** Replaces the in-memory marks with this consumer group's marks on the (compacted) state topic. */
  async reload(kafka: Kafka, stateTopic: string): Promise<void> {
    // A replay has no consumer group to resume from: kafkajs giving up on it in a broker restart ("Failed to
    // find group coordinator") ended the reload, and with it the processors. Reading the topic again is
    // harmless (the marks are rebuilt from scratch), so outages are retried for about the clients' budget.
    const deadline = Date.now() + RELOAD_OUTAGE_BUDGET_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.reloadOnce(kafka, stateTopic);
      } catch (error) {
        if (!isKafkaOutage(error) || Date.now() > deadline) throw error;
        const pauseMs = 1000 * Math.min(attempt, 5);
        console.error(`processors: reading the episode marks failed (${error instanceof Error ? error.message : String(error)}); reading them again in ${pauseMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    }
  }

  private async reloadOnce(kafka: Kafka, stateTopic: string): Promise<void> {
    const replay = await createReplay<EpisodeMark | null>(kafka, {
      topic: stateTopic,
      decode: (payload) => (payload === null ? null : (JSON.parse(payload.toString('utf8')) as EpisodeMark)),
      classify: (error) => (error instanceof SyntaxError ? { reason: 'invalid-value', detail: error.message } : undefined),
    });
    const prefix = `${this.consumerGroupId}|`;
    const loaded = new Map<string, EpisodeMark>();
    await new Promise<void>((resolve, reject) => {
      replay.events$.subscribe({
        next: (envelope) => {
          const key = envelope.key?.toString('utf8') ?? '';
          if (!key.startsWith(prefix)) return;
          if (envelope.value === null) loaded.delete(key);
          else loaded.set(key, envelope.value);
        },
        error: reject,
        complete: resolve,
      });
    });
    // Marks this process committed itself stay: a transaction's commit markers reach the state topic a
    // moment after commit() returns, so a reload right after a commit can miss them. Keeping a mark that
    // was tombstoned meanwhile is harmless (its episode is wholly below the committed offsets).
    const committedHere = [...this.marks];
    this.marks.clear();
    for (const [key, mark] of loaded) this.marks.set(key, mark);
    for (const [key, mark] of committedHere) if (!this.marks.has(key)) this.marks.set(key, mark);
  }
}
