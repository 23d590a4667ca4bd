// What a unit of the processors' output holds: a group's trajectories, samples and steps, and the episode
// marks ('emitted', 'dropped', 'dead_letter') that keep it from being written twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trajectoryFromSteps, type TrajectoryGroup } from '../../../processors/assembly/index.js';
import { EpisodeMarks, deadLetterMarkKey, episodeMarkKey } from '../../../processors/exactly-once/episode-marks.js';
import { acknowledgeOnly, deadLetterUnit, episodeMarkOf, episodesUnit, rolloutBatchUnits, type Member, type StepEnvelope } from '../../../processors/pipeline/output-units.js';
import { batchProcessor } from '../../../processors/pipeline/process-batch.js';
import { episodeSteps } from '../../../bench/load/episodes.js';
import type { DeadLetterInput } from '../../../streams/dead-letter.js';

const envelope = (value: StepEnvelope['value'], offset: string, partition = 0): StepEnvelope => ({
  topic: 'steps',
  partition,
  offset,
  key: null,
  timestamp: 0,
  value,
  generation: 3,
  ack: () => undefined,
});

/** A group's members, their steps at the given offsets (in arrival order). */
function group(groupId: string, rewards: number[], firstOffset: number): TrajectoryGroup<Member> {
  let offset = firstOffset;
  const members = rewards.map((finalReward, episode): Member => {
    const steps = episodeSteps({ runId: 'r', groupId, groupSize: rewards.length, episode, length: 2, finalReward });
    return { trajectory: trajectoryFromSteps(steps).trajectory, sources: steps.map((s) => envelope(s, String(offset++))), closedBy: 'ended', complete: true };
  });
  return { runId: 'r', groupId, members, expectedSize: rewards.length, partial: false, closedBy: 'full' };
}

test("an episode's mark is keyed by group, run and episode, at its last step's position (offsets compared as numbers)", () => {
  const [first] = group('g', [1], 0).members;
  const member: Member = { ...first!, sources: [envelope(first!.trajectory as never, '9'), envelope(first!.trajectory as never, '10'), envelope(first!.trajectory as never, '8')] };
  assert.deepEqual(episodeMarkOf('cg', member, 'emitted'), {
    key: episodeMarkKey('cg', 'r', member.trajectory.episodeId),
    topic: 'steps',
    partition: 0,
    maxOffset: '10',
    status: 'emitted',
  });
});

test('a unit of episodes: their trajectories, one mark each, every step they were made of', () => {
  const g = group('g', [1, 0], 0);
  const unit = episodesUnit('cg', 3, g.members, 'dropped');
  assert.equal(unit.generation, 3);
  assert.deepEqual(unit.samples, []);
  assert.deepEqual(
    unit.trajectories,
    g.members.map((m) => m.trajectory),
  );
  assert.deepEqual(
    unit.marks.map((m) => [m.status, m.maxOffset]),
    [
      ['dropped', '1'],
      ['dropped', '3'],
    ],
  );
  assert.deepEqual(
    unit.sources.map((s) => (s as StepEnvelope).offset),
    ['0', '1', '2', '3'],
  );
});

test('a step that feeds no output is only acknowledged: no events, no marks', () => {
  const e = envelope(group('g', [1], 0).members[0]!.sources[0]!.value, '5');
  assert.deepEqual(acknowledgeOnly(7, e), { generation: 7, samples: [], trajectories: [], marks: [], sources: [e] });
});

test("a rollout batch: a kept group's unit holds its samples and 'emitted' marks, a filtered one 'dropped'; the statistics go with the first", () => {
  const process = batchProcessor({ reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [{ name: 'dynamic_sampling' }] });
  const batch = [group('flat', [1, 1], 0), group('mixed', [1, 0], 4)];
  const result = process(batch.map((g) => ({ groupId: g.groupId, trajectories: g.members.map((m) => m.trajectory) })));
  const units = rolloutBatchUnits('cg', 3, batch, result);
  assert.equal(units.length, 2);
  assert.deepEqual(
    units.map((u) => u.marks.map((m) => m.status)),
    [
      ['dropped', 'dropped'],
      ['emitted', 'emitted'],
    ],
  );
  assert.deepEqual(
    units.map((u) => u.samples.length),
    [0, 2],
  );
  assert.ok(units[1]!.samples.every((s) => s.groupId === 'mixed'));
  assert.equal(units[0]!.rolloutStats?.[0]?.scope, 'batch');
  assert.equal(units[0]!.rolloutStats?.[0]?.eventTimeMs, Math.max(...batch.flatMap((g) => g.members.map((m) => m.trajectory.lastEventTimeMs))));
  assert.equal('rolloutStats' in units[1]!, false);
});

test("a rollout batch's statistics count its groups by close reason: a timed-out group shows as 'timeout', per batch", () => {
  const process = batchProcessor({ reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [] });
  const timedOut: TrajectoryGroup<Member> = { ...group('slow', [1, 0], 8), expectedSize: 3, partial: true, closedBy: 'timeout' };
  const batch = [group('a', [1, 0], 0), group('b', [0, 1], 4), timedOut];
  const result = process(batch.map((g) => ({ groupId: g.groupId, trajectories: g.members.map((m) => m.trajectory) })));
  const [batchEvent, ...groupEvents] = rolloutBatchUnits('cg', 3, batch, result)[0]!.rolloutStats!;
  assert.equal(batchEvent!.scope, 'batch');
  assert.deepEqual(batchEvent!.closedBy, { full: 2, timeout: 1 });
  assert.equal(groupEvents.length, 3);
  assert.ok(groupEvents.every((e) => e.scope === 'group' && Object.keys(e.closedBy).length === 0));
  // The next batch counts only its own groups.
  const next = [group('c', [1, 0], 12)];
  const nextResult = process(next.map((g) => ({ groupId: g.groupId, trajectories: g.members.map((m) => m.trajectory) })));
  assert.deepEqual(rolloutBatchUnits('cg', 3, next, nextResult)[0]!.rolloutStats![0]!.closedBy, { full: 1 });
});

test('a dead letter is written with a mark of its position; read again once marked, it is only acknowledged', () => {
  const marks = new EpisodeMarks('cg');
  const letter = { reason: 'truncated' } as DeadLetterInput;
  const source = { topic: 'steps', partition: 2, offset: '41', generation: 5, ack: () => undefined };
  const unit = deadLetterUnit(marks, letter, source);
  assert.deepEqual(unit, {
    generation: 5,
    samples: [],
    trajectories: [],
    marks: [{ key: deadLetterMarkKey('cg', 'steps', 2, '41'), topic: 'steps', partition: 2, maxOffset: '41', status: 'dead_letter' }],
    deadLetters: [letter],
    sources: [source],
  });
  marks.add(unit!.marks[0]!);
  assert.equal(deadLetterUnit(marks, letter, source), null);
});
