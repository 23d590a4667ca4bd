// Group completion when a producer announces no size: the idle close (marble tests), the open-episode count
// that holds it, the counters by close reason; and the announced-size gate (GroupSizes) that refuses a
// malformed or disagreeing info.groupSize.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { map } from 'rxjs';
import type { StepEvent } from '../../../schemas/index.js';
import {
  assembleGroups,
  assembleTrajectories,
  createGroupAssemblyStats,
  GroupOpenEpisodes,
  GroupSizes,
  trajectoryFromSteps,
  type AssembledTrajectory,
  type TrajectoryGroup,
} from '../../../processors/assembly/index.js';
import { announcedGroupSize, MAX_GROUP_SIZE, validateIngestStep } from '../../../schemas/index.js';
import { ConfigError } from '../../../core/errors.js';
import { createTestScheduler } from './test-scheduler.js';
import { step } from './steps.js';

type Item = AssembledTrajectory<StepEvent>;
const RUN = step({ episode: 'x', index: 0 }).runId;

function assembled(episode: string, { group = 'g1', groupSize }: { group?: string; groupSize?: number } = {}): Item {
  const s = step({ episode, index: 0, group, end: 'terminated', groupSize });
  return { trajectory: trajectoryFromSteps([s]).trajectory, sources: [s], closedBy: 'ended', complete: true };
}

const summary = (g: TrajectoryGroup<Item>) => ({ group: g.groupId, members: g.members.map((m) => m.trajectory.episodeId), closedBy: g.closedBy });

describe('idle close of a group that announces no size', () => {
  test('closes idleCloseMs after its latest trajectory, long before the group timeout; counted as idle', () => {
    const scheduler = createTestScheduler();
    const stats = createGroupAssemblyStats();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('  a-b--c------------', { a: assembled('a'), b: assembled('b'), c: assembled('c') });
      const expected = '    ---------x--------';
      //                    c at frame 5, idle 4 → closed at 9; the group timeout (1000) and size (8) never reached
      const values = { x: { group: 'g1', members: ['a', 'b', 'c'], closedBy: 'idle' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 8, groupTimeoutMs: 1000, idleCloseMs: 4, scheduler, stats }), map(summary))).toBe(expected, values);
    });
    assert.equal(stats.closedBy.idle, 1);
    assert.equal(stats.closedBy.timeout, 0);
    assert.equal(stats.partialGroups, 1);
  });

  test('a group with an episode still open stays open at the idle deadline, and closes idle after that episode’s trajectory', () => {
    const scheduler = createTestScheduler();
    const open = new GroupOpenEpisodes();
    scheduler.run(({ hot, cold, expectObservable }) => {
      // The second episode opens at frame 1 and ends at frame 12 (its trajectory arrives then).
      cold('-o----------c|', { o: 'open', c: 'close' }).subscribe((what) => (what === 'open' ? open.opened(RUN, 'g1') : open.closed(RUN, 'g1')));
      const source = hot('  a-----------b-------', { a: assembled('a'), b: assembled('b') });
      const expected = '    ----------------x---';
      const values = { x: { group: 'g1', members: ['a', 'b'], closedBy: 'idle' } };
      const hasOpenEpisodes = (runId: string, groupId: string) => open.has(runId, groupId);
      expectObservable(source.pipe(assembleGroups({ groupSize: 8, groupTimeoutMs: 1000, idleCloseMs: 4, hasOpenEpisodes, scheduler }), map(summary))).toBe(expected, values);
    });
  });

  test('a group that announces its size waits for it (no idle close), and closes full at once', () => {
    const scheduler = createTestScheduler();
    const stats = createGroupAssemblyStats();
    scheduler.run(({ hot, expectObservable }) => {
      const t = (e: string) => assembled(e, { groupSize: 3 });
      const source = hot('  a------b-----c---', { a: t('a'), b: t('b'), c: t('c') });
      const expected = '    -------------x---';
      expectObservable(source.pipe(assembleGroups({ groupSize: 8, groupTimeoutMs: 1000, idleCloseMs: 4, scheduler, stats }), map(summary))).toBe(expected, {
        x: { group: 'g1', members: ['a', 'b', 'c'], closedBy: 'full' },
      });
    });
    assert.deepEqual(stats.closedBy, { full: 1, idle: 0, timeout: 0, evicted: 0, 'source-completed': 0 });
  });

  test('without idleCloseMs an unannounced short group waits for the group timeout (counted as timeout)', () => {
    const scheduler = createTestScheduler();
    const stats = createGroupAssemblyStats();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('  a-b---------------', { a: assembled('a'), b: assembled('b') });
      const expected = '    ------------x-----';
      expectObservable(source.pipe(assembleGroups({ groupSize: 8, groupTimeoutMs: 12, scheduler, stats }), map(summary))).toBe(expected, {
        x: { group: 'g1', members: ['a', 'b'], closedBy: 'timeout' },
      });
    });
    assert.equal(stats.closedBy.timeout, 1);
  });

  test('idleCloseMs must be > 0', () => {
    assert.throws(() => assembleGroups({ idleCloseMs: 0 }), ConfigError);
  });
});

describe('the trajectory assembler counts each group’s open episodes', () => {
  test('an episode is open from its first step until its trajectory is emitted', () => {
    const scheduler = createTestScheduler();
    const open = new GroupOpenEpisodes();
    const seen: boolean[] = [];
    scheduler.run(({ hot }) => {
      const steps = { a: step({ episode: 'e1', index: 0 }), b: step({ episode: 'e1', index: 1, end: 'terminated' }) };
      hot('a--b', steps)
        .pipe(assembleTrajectories({ openEpisodesByGroup: open, scheduler }))
        .subscribe(() => seen.push(open.has(RUN, 'g1')));
      scheduler.schedule(() => seen.push(open.has(RUN, 'g1')), 1);
    });
    // at frame 1 the episode is open; when its trajectory is emitted it is not any more
    assert.deepEqual(seen, [true, false]);
    assert.equal(open.size, 0);
  });
});

describe('announced group sizes (info.groupSize)', () => {
  const withSize = (groupSize: string, episode = 'e1', group = 'g1') => ({ ...step({ episode, index: 0, group }), info: { groupSize } });

  test('the first step of a group decides; the same size passes, another is refused naming the field', () => {
    const sizes = new GroupSizes();
    assert.deepEqual(sizes.check(withSize('4', 'e1')), { ok: true });
    assert.deepEqual(sizes.check(withSize('4', 'e2')), { ok: true });
    assert.deepEqual(sizes.check(step({ episode: 'e3', index: 0 })), { ok: true });
    const other = sizes.check(withSize('5', 'e4'));
    assert.equal(other.ok, false);
    assert.equal(!other.ok && other.field, 'info.groupSize');
    assert.match(!other.ok ? other.detail : '', /info\.groupSize is 5 but earlier steps of group "g1" .* announced 4/);
    // another group may announce another size
    assert.deepEqual(sizes.check(withSize('5', 'e5', 'g2')), { ok: true });
  });

  test('a malformed size is refused: not digits, 0, above the maximum', () => {
    const sizes = new GroupSizes();
    for (const bad of ['abc', '0', '-1', '3.0', ' 4', String(MAX_GROUP_SIZE + 1), '99999999999']) {
      const verdict = sizes.check(withSize(bad, `e-${bad}`, `g-${bad}`));
      assert.equal(verdict.ok, false, bad);
      assert.match(!verdict.ok ? verdict.detail : '', /info\.groupSize must be a decimal integer from 1 to 4096/);
    }
    assert.equal(announcedGroupSize({ groupSize: String(MAX_GROUP_SIZE) }), MAX_GROUP_SIZE);
    assert.equal(announcedGroupSize({}), undefined);
  });

  test('ingest refuses a malformed info.groupSize and accepts a valid one', () => {
    const base = step({ episode: 'e1', index: 0 });
    assert.deepEqual(validateIngestStep({ ...base, info: { groupSize: '8' } }), { ok: true });
    const bad = validateIngestStep({ ...base, info: { groupSize: 'eight' } });
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.field, 'info.groupSize');
  });
});
