// What the processors write, unit by unit. A unit is what the transactional emitter writes in one
// transaction of its input partition (processors/exactly-once/transactional-emitter.ts): a group's samples
// and trajectories, the episode marks that keep them from being written again, and the step messages whose
// offsets the transaction commits. Pure: the shell (processor.ts) hands the units to the emitter.
//
// Which mark each episode gets:
//   'emitted'      its group was kept and its samples are in the unit;
//   'dropped'      its group was filtered out, or dropped by the assembly (too small, late, a duplicate):
//                  nothing but the mark, so its steps read again are skipped too;
//   'dead_letter'  not an episode: a step message that could not be decoded, marked by its position.
// An episode's mark sits at its last step's position: it may be released once the committed offset of its
// partition has passed that step (episode-marks.ts).
import type { RolloutStatsEvent, StepEvent, TrainingSampleEvent } from '../../schemas/index.js';
import type { DeadLetterInput, HeldSource } from '../../streams/dead-letter.js';
import { offsetAtLeast } from '../../streams/offset-order.js';
import type { Envelope } from '../../streams/topic-consumer.js';
import type { AssembledTrajectory, TrajectoryGroup } from '../assembly/index.js';
import { deadLetterMarkKey, episodeMarkKey, type EpisodeMark, type EpisodeMarks } from '../exactly-once/episode-marks.js';
import type { OutputUnit } from '../exactly-once/transactional-emitter.js';
import type { BatchOutput } from './process-batch.js';
import { closedByOf, rolloutStatsEvents } from './rollout-stats-events.js';

export type StepEnvelope = Envelope<StepEvent>;
/** An assembled episode and the step messages it was assembled from. */
export type Member = AssembledTrajectory<StepEnvelope>;

/** The mark of an episode: keyed by consumer group, run and episode, at the position of its last step. */
export function episodeMarkOf(consumerGroupId: string, member: Member, status: EpisodeMark['status']): EpisodeMark {
  const last = member.sources.reduce((a, b) => (offsetAtLeast(a.offset, b.offset) ? a : b));
  return {
    key: episodeMarkKey(consumerGroupId, member.trajectory.runId, member.trajectory.episodeId),
    topic: last.topic,
    partition: last.partition,
    maxOffset: last.offset,
    status,
  };
}

/** The unit of some episodes: their trajectories, marks and steps, with the samples made of them. */
export function episodesUnit(
  consumerGroupId: string,
  generation: number,
  members: readonly Member[],
  status: EpisodeMark['status'],
  samples: OutputUnit['samples'] = [],
): OutputUnit {
  return {
    generation,
    samples,
    trajectories: members.map((m) => m.trajectory),
    marks: members.map((m) => episodeMarkOf(consumerGroupId, m, status)),
    sources: members.flatMap((m) => m.sources),
  };
}

/** A step that feeds no output (late, or of an episode already written): acknowledged with the next write. */
export function acknowledgeOnly(generation: number, envelope: StepEnvelope): OutputUnit {
  return { generation, samples: [], trajectories: [], marks: [], sources: [envelope] };
}

/**
 * The unit of a step message that could not be decoded: its dead letter and a mark of its position, in the
 * transaction of its offset. null when the mark is already there (the message is read again after a
 * crash or a rebalance): its letter was written, it is only acknowledged.
 */
export function deadLetterUnit(marks: Pick<EpisodeMarks, 'consumerGroupId' | 'hasDeadLetter'>, letter: DeadLetterInput, source: HeldSource): OutputUnit | null {
  if (marks.hasDeadLetter(source.topic, source.partition, source.offset)) return null;
  const mark: EpisodeMark = {
    key: deadLetterMarkKey(marks.consumerGroupId, source.topic, source.partition, source.offset),
    topic: source.topic,
    partition: source.partition,
    maxOffset: source.offset,
    status: 'dead_letter',
  };
  return { generation: source.generation, samples: [], trajectories: [], marks: [mark], deadLetters: [letter], sources: [source] };
}

/**
 * A processed rollout batch (of one run) as units, one per group in the batch's order: a kept group's
 * episodes 'emitted' with its samples, the others 'dropped'. The batch's statistics travel with its first
 * group, inside the same transaction.
 */
export function rolloutBatchUnits(consumerGroupId: string, generation: number, batch: readonly TrajectoryGroup<Member>[], result: BatchOutput): OutputUnit[] {
  const kept = new Set(result.keptGroupIds);
  const samplesOf = samplesByGroup(result.samples);
  const rolloutStats = batchRolloutStats(batch, result);
  return batch.map((group, i) => {
    const samples = samplesOf.get(group.groupId) ?? [];
    const unit = episodesUnit(consumerGroupId, generation, group.members, kept.has(group.groupId) ? 'emitted' : 'dropped', samples);
    return i === 0 ? { ...unit, rolloutStats } : unit;
  });
}

/** The batch's rollout statistics events, timed by its last trajectory (so a replay gives the same events), with its groups' close reasons. */
function batchRolloutStats(batch: readonly TrajectoryGroup<Member>[], result: BatchOutput): RolloutStatsEvent[] {
  const eventTimeMs = Math.max(...batch.flatMap((g) => g.members.map((m) => m.trajectory.lastEventTimeMs)));
  return rolloutStatsEvents(
    batch[0]!.runId,
    batch.map((g) => g.groupId),
    result.stats,
    eventTimeMs,
    closedByOf(batch),
  );
}

function samplesByGroup(samples: readonly TrainingSampleEvent[]): Map<string, TrainingSampleEvent[]> {
  const byGroup = new Map<string, TrainingSampleEvent[]>();
  for (const sample of samples) {
    const list = byGroup.get(sample.groupId);
    if (list) list.push(sample);
    else byGroup.set(sample.groupId, [sample]);
  }
  return byGroup;
}
