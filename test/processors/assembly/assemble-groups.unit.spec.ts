import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { map } from 'rxjs';
import type { StepEvent } from '../../../schemas/index.js';
import {
  assembleGroups,
  assembleTrajectories,
  createGroupAssemblyStats,
  trajectoryFromSteps,
  type AssembledTrajectory,
  type GroupDrop,
  type TrajectoryGroup,
} from '../../../processors/assembly/index.js';
import { ConfigError } from '../../../core/errors.js';
import { createTestScheduler } from './test-scheduler.js';
import { step } from './steps.js';

type Item = AssembledTrajectory<StepEvent>;

/** A one-step trajectory of `episode` in `group`, as the trajectory assembler emits it. */
function assembled(episode: string, { group = 'g1', incomplete = false, groupSize }: { group?: string; incomplete?: boolean; groupSize?: number } = {}): Item {
  const s = step({ episode, index: 0, group, end: incomplete ? undefined : 'terminated', groupSize });
  const { trajectory } = trajectoryFromSteps([s]);
  return { trajectory, sources: [s], closedBy: incomplete ? 'idle' : 'ended', complete: !incomplete };
}

function summary(g: TrajectoryGroup<Item>) {
  return {
    group: g.groupId,
    members: g.members.map((m) => m.trajectory.episodeId),
    expected: g.expectedSize,
    partial: g.partial,
    closedBy: g.closedBy,
  };
}

/** onDrop calls as [frame, reason, group, episodes]. */
function dropRecorder(now: () => number) {
  const drops: Array<[number, string, string, string[]]> = [];
  const onDrop = (d: GroupDrop<Item>) => drops.push([now(), d.reason, d.groupId, d.items.map((i) => i.trajectory.episodeId)]);
  return { drops, onDrop };
}

describe('assembleGroups', () => {
  test('emits a group as soon as its expected size has arrived, groups interleaved', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const trajectories = {
        a: assembled('a'),
        b: assembled('b'),
        c: assembled('c'),
        p: assembled('p', { group: 'g2' }),
        q: assembled('q', { group: 'g2' }),
        r: assembled('r', { group: 'g2' }),
      };
      const source = hot('  a-p-b-q-c-r---', trajectories);
      const expected = '    --------x-y---';
      const values = {
        x: { group: 'g1', members: ['a', 'b', 'c'], expected: 3, partial: false, closedBy: 'full' },
        y: { group: 'g2', members: ['p', 'q', 'r'], expected: 3, partial: false, closedBy: 'full' },
      };
      expectObservable(source.pipe(assembleGroups({ groupSize: 3, groupTimeoutMs: 50, scheduler: testScheduler }), map(summary))).toBe(expected, values);
      expectSubscriptions(source.subscriptions).toBe('^');
    });
  });

  test('a group still short at groupTimeoutMs after its first trajectory is emitted partial when it has minGroupSize', () => {
    const testScheduler = createTestScheduler();
    const stats = createGroupAssemblyStats();
    testScheduler.run(({ hot, expectObservable }) => {
      const trajectories = { a: assembled('a'), b: assembled('b') };
      const source = hot('  a--b---------------', trajectories);
      const expected = '    ----------x--------';
      //                    timeout 10 from a (frame 0), not from b
      const values = { x: { group: 'g1', members: ['a', 'b'], expected: 4, partial: true, closedBy: 'timeout' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 4, minGroupSize: 2, groupTimeoutMs: 10, scheduler: testScheduler, stats }), map(summary))).toBe(expected, values);
    });
    assert.equal(stats.groups, 1);
    assert.equal(stats.partialGroups, 1);
  });

  test('a late group below minGroupSize is dropped with its reason; a trajectory after the close is dropped as late', () => {
    const testScheduler = createTestScheduler();
    const stats = createGroupAssemblyStats();
    const { drops, onDrop } = dropRecorder(() => testScheduler.now());
    testScheduler.run(({ hot, expectObservable }) => {
      const trajectories = { a: assembled('a'), b: assembled('b') };
      const source = hot('  a-------------b--', trajectories);
      const expected = '    -----------------';
      expectObservable(source.pipe(assembleGroups({ groupSize: 4, minGroupSize: 2, groupTimeoutMs: 10, scheduler: testScheduler, stats, onDrop }), map(summary))).toBe(expected);
    });
    assert.deepEqual(drops, [
      [10, 'too-small', 'g1', ['a']],
      [14, 'late', 'g1', ['b']],
    ]);
    assert.equal(stats.droppedGroups, 1);
    assert.deepEqual(stats.dropped, { 'too-small': 1, incomplete: 0, late: 1, duplicate: 0 });
  });

  test('leaves incomplete trajectories out but counts them as arrived, so the group does not wait for its timeout', () => {
    const trajectories = { a: assembled('a'), i: assembled('i', { incomplete: true }), b: assembled('b') };
    const testScheduler = createTestScheduler();
    const { drops, onDrop } = dropRecorder(() => testScheduler.now());
    testScheduler.run(({ hot, expectObservable }) => {
      const source = hot('  a-i-b---', trajectories);
      const expected = '    ----x---';
      const values = { x: { group: 'g1', members: ['a', 'b'], expected: 3, partial: true, closedBy: 'full' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 3, groupTimeoutMs: 50, scheduler: testScheduler, onDrop }), map(summary))).toBe(expected, values);
    });
    assert.deepEqual(drops, [[2, 'incomplete', 'g1', ['i']]]);

    createTestScheduler().run(({ hot, expectObservable }) => {
      const source = hot('  a-i-b---', trajectories);
      const expected = '    ----x---';
      const values = { x: { group: 'g1', members: ['a', 'i', 'b'], expected: 3, partial: false, closedBy: 'full' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 3, groupTimeoutMs: 50, includeIncomplete: true }), map(summary))).toBe(expected, values);
    });
  });

  test('the expected size announced by the steps (info.groupSize) overrides the groupSize option', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ hot, expectObservable }) => {
      const trajectories = { a: assembled('a', { groupSize: 2 }), b: assembled('b', { groupSize: 2 }) };
      const source = hot('  a-b---', trajectories);
      const expected = '    --x---';
      const values = { x: { group: 'g1', members: ['a', 'b'], expected: 2, partial: false, closedBy: 'full' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 8, groupTimeoutMs: 50, scheduler: testScheduler }), map(summary))).toBe(expected, values);
    });
  });

  test('drops a second trajectory of an episode already in the open group', () => {
    const testScheduler = createTestScheduler();
    const { drops, onDrop } = dropRecorder(() => testScheduler.now());
    testScheduler.run(({ hot, expectObservable }) => {
      const trajectories = { a: assembled('a'), b: assembled('b') };
      const source = hot('  a-a-b---', trajectories);
      const expected = '    ----x---';
      const values = { x: { group: 'g1', members: ['a', 'b'], expected: 2, partial: false, closedBy: 'full' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 2, groupTimeoutMs: 50, scheduler: testScheduler, onDrop }), map(summary))).toBe(expected, values);
    });
    assert.deepEqual(drops, [[2, 'duplicate', 'g1', ['a']]]);
  });

  test('on source completion closes the open groups as a timeout would', () => {
    const testScheduler = createTestScheduler();
    const { drops, onDrop } = dropRecorder(() => testScheduler.now());
    testScheduler.run(({ cold, expectObservable }) => {
      const trajectories = { a: assembled('a'), b: assembled('b'), p: assembled('p', { group: 'g2' }) };
      const source = cold('  a-b-p-|', trajectories);
      const expected = '     ------(x|)';
      const values = { x: { group: 'g1', members: ['a', 'b'], expected: 4, partial: true, closedBy: 'source-completed' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 4, groupTimeoutMs: 50, scheduler: testScheduler, onDrop }), map(summary))).toBe(expected, values);
    });
    assert.deepEqual(drops, [[6, 'too-small', 'g2', ['p']]]);
  });

  test('unsubscribing tears down the source and clears the group timers', () => {
    const testScheduler = createTestScheduler();
    const stats = createGroupAssemblyStats();
    const { drops, onDrop } = dropRecorder(() => testScheduler.now());
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('  a-b-------------', { a: assembled('a'), b: assembled('b') });
      const unsub = '       ^----!          ';
      expectObservable(source.pipe(assembleGroups({ groupSize: 4, groupTimeoutMs: 10, scheduler: testScheduler, stats, onDrop }), map(summary)), unsub).toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
    // A surviving timer would have fired at frame 10 and emitted or dropped the group.
    assert.deepEqual(drops, []);
    assert.equal(stats.groups, 0);
    assert.equal(stats.openGroups, 0);
  });

  test('steps to groups: out-of-order steps, an idle episode and a group size announced in info', () => {
    const testScheduler = createTestScheduler();
    const { drops, onDrop } = dropRecorder(() => testScheduler.now());
    testScheduler.run(({ hot, expectObservable }) => {
      const steps = {
        a: step({ episode: 'e1', index: 1, end: 'terminated', groupSize: 3 }),
        b: step({ episode: 'e1', index: 0, groupSize: 3 }),
        c: step({ episode: 'e2', index: 0, end: 'truncated', groupSize: 3 }),
        d: step({ episode: 'e3', index: 0, groupSize: 3 }), // never ends: closed idle at frame 4 + 10
      };
      const source = hot('  a-bcd---------------', steps);
      const expected = '    --------------x-----';
      const values = { x: { group: 'g1', members: ['e1', 'e2'], expected: 3, partial: true, closedBy: 'full' } };
      const pipeline = source.pipe(
        assembleTrajectories({ idleTimeoutMs: 10, scheduler: testScheduler }),
        assembleGroups({ groupSize: 16, groupTimeoutMs: 100, scheduler: testScheduler, onDrop }),
        map(summary),
      );
      expectObservable(pipeline).toBe(expected, values);
    });
    assert.deepEqual(drops, [[14, 'incomplete', 'g1', ['e3']]]);
  });

  test('rejects options that cannot work, saying what would', () => {
    assert.throws(() => assembleGroups({ groupSize: 0 }), ConfigError);
    assert.throws(() => assembleGroups({ groupSize: 4, minGroupSize: 5 }), /minGroupSize must be an integer in \[1, groupSize = 4\]/);
    assert.throws(() => assembleGroups({ groupTimeoutMs: -1 }), /groupTimeoutMs must be > 0/);
  });
});
