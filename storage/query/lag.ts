// GET /v1/lag: how far each consumer group of the project is behind, per topic and partition. The groups
// are the project's own — `<prefix>.processors`, `<prefix>.sink`, `<prefix>.learner` — plus every group the
// broker lists whose name starts with `<prefix>.`. For each group, the committed offsets (admin.fetchOffsets)
// are compared with the partitions' high watermarks (admin.fetchTopicOffsets): lag = high − committed. A
// partition the group has never committed on counts everything still retained (high − low) as lag, since
// the project's consumers start from the beginning. The pure part (lagReport) is separate from the calls.
import type { Admin } from 'kafkajs';
import { retryRetriable } from '../../streams/retry.js';
import { patternParam, readQuery, type RawQuery } from './params.js';

/** The calls this module makes on a kafkajs admin client. */
export type LagAdmin = Pick<Admin, 'listGroups' | 'describeGroups' | 'fetchOffsets' | 'fetchTopicOffsets'>;

/** Most groups in one report. */
export const MAX_LAG_GROUPS = 100;
/** The project's groups, reported even when the broker does not list them (not started yet). */
export const PROJECT_GROUPS = ['processors', 'sink', 'learner'] as const;

export interface LagQuery {
  /** Only this group. */
  readonly group?: string;
}

export const lagParams = ['group'] as const;

/** Kafka group ids: letters, digits, '.', '_' and '-' (what the project uses), at most 249 characters. */
export const GROUP_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;

export function parseLagQuery(query: RawQuery): LagQuery {
  const values = readQuery(query, lagParams);
  const group = patternParam(values, 'group', GROUP_PATTERN, 'a consumer group id (letters, digits, . _ -)');
  return group === undefined ? {} : { group };
}

export interface PartitionLag {
  readonly partition: number;
  /** The group's committed offset; null when it has none on this partition. */
  readonly committedOffset: number | null;
  readonly lowWatermark: number | null;
  readonly highWatermark: number | null;
  /** Records the group has yet to process; null when the partition's offsets could not be read. */
  readonly lag: number | null;
}

export interface TopicLag {
  readonly topic: string;
  readonly lag: number | null;
  readonly partitions: PartitionLag[];
}

export interface GroupLag {
  readonly groupId: string;
  /** The broker's group state ('Stable', 'Empty', 'PreparingRebalance', … 'Dead' for a group it does not know). */
  readonly state: string;
  readonly members: number;
  /** Sum over its topics; null when some partition's offsets could not be read. */
  readonly lag: number | null;
  readonly topics: TopicLag[];
}

export interface LagReport {
  readonly prefix: string;
  readonly groups: GroupLag[];
  readonly truncated: boolean;
}

/** The groups to report: the project's, then the listed ones with the prefix, sorted, at most MAX_LAG_GROUPS. */
export function groupsToReport(prefix: string, listed: readonly string[], only?: string): { groups: string[]; truncated: boolean } {
  if (only !== undefined) return { groups: [only], truncated: false };
  const all = new Set<string>(PROJECT_GROUPS.map((name) => `${prefix}.${name}`));
  for (const group of listed) if (group.startsWith(`${prefix}.`)) all.add(group);
  const sorted = [...all].sort();
  return { groups: sorted.slice(0, MAX_LAG_GROUPS), truncated: sorted.length > MAX_LAG_GROUPS };
}

type Committed = ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: string }> }>;
type Watermarks = ReadonlyArray<{ partition: number; high: string; low: string }>;

const sum = (values: ReadonlyArray<number | null>): number | null => values.reduce<number | null>((total, v) => (total === null || v === null ? null : total + v), 0);

/** One topic's lag for a group, from its committed offsets and the topic's watermarks (null: unreadable). */
export function topicLag(topic: string, committed: Committed[number]['partitions'], watermarks: Watermarks | null): TopicLag {
  const byPartition = new Map(committed.map((p) => [p.partition, Number(p.offset)]));
  const partitionIds = new Set<number>([...byPartition.keys(), ...(watermarks ?? []).map((w) => w.partition)]);
  const marks = new Map((watermarks ?? []).map((w) => [w.partition, { high: Number(w.high), low: Number(w.low) }]));
  const partitions = [...partitionIds]
    .sort((a, b) => a - b)
    .map((partition): PartitionLag => {
      const raw = byPartition.get(partition);
      const committedOffset = raw === undefined || raw < 0 ? null : raw;
      const mark = marks.get(partition);
      if (mark === undefined) return { partition, committedOffset, lowWatermark: null, highWatermark: null, lag: null };
      // A committed offset below the low watermark (records deleted by retention) lags by what is retained.
      const lag = committedOffset === null ? mark.high - mark.low : Math.max(0, mark.high - Math.max(committedOffset, mark.low));
      return { partition, committedOffset, lowWatermark: mark.low, highWatermark: mark.high, lag };
    });
  return { topic, lag: sum(partitions.map((p) => p.lag)), partitions };
}

/** Reads the offsets from the broker and builds the report. */
export async function consumerLag(admin: LagAdmin, prefix: string, q: LagQuery = {}): Promise<LagReport> {
  const listed = q.group === undefined ? (await admin.listGroups()).groups.map((g) => g.groupId) : [];
  const { groups, truncated } = groupsToReport(prefix, listed, q.group);
  const described = new Map((await retryRetriable(() => admin.describeGroups(groups))).groups.map((g) => [g.groupId, g]));
  const committedByGroup = await Promise.all(groups.map((groupId) => retryRetriable(() => admin.fetchOffsets({ groupId }) as Promise<Committed>)));
  const topics = new Set(committedByGroup.flatMap((committed) => committed.map((t) => t.topic)));
  const watermarks = new Map<string, Watermarks | null>();
  await Promise.all(
    [...topics].map(async (topic) => {
      // A topic deleted since the group committed on it has no watermarks: its lag is unknown, not an error.
      watermarks.set(topic, await admin.fetchTopicOffsets(topic).catch(() => null));
    }),
  );
  const report = groups.map((groupId, i): GroupLag => {
    const description = described.get(groupId);
    const topicLags = committedByGroup[i]!.map((t) => topicLag(t.topic, t.partitions, watermarks.get(t.topic) ?? null)).sort((a, b) => a.topic.localeCompare(b.topic));
    return {
      groupId,
      state: description?.state ?? 'Unknown',
      members: description?.members.length ?? 0,
      lag: sum(topicLags.map((t) => t.lag)),
      topics: topicLags,
    };
  });
  return { prefix, groups: report, truncated };
}
