// The group assembler's decisions (group-assembly.ts) event by event, without RxJS; then marble tests of the
// operator's timers where the decisions and the timers meet: eviction, an announced size cancelling the idle
// close, a failing callback.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { map } from 'rxjs';
import type { StepEvent } from '../../../schemas/index.js';
import {
  assembleGroups,
  createGroupAssemblyStats,
  trajectoryFromSteps,
  type AssembledTrajectory,
  type GroupDrop,
  type TrajectoryGroup,
} from '../../../processors/assembly/index.js';
import {
  countGroupEffect,
  createGroupAssembly,
  groupAssemblyStep,
  type GroupAssemblyRules,
  type GroupEffect,
  type GroupEvent,
} from '../../../processors/assembly/group-assembly.js';
import { scopedKey } from '../../../processors/assembly/recently-closed.js';
import { createTestScheduler } from './test-scheduler.js';
import { step } from './steps.js';

type Item = AssembledTrajectory<StepEvent>;
const RUN = step({ episode: 'x', index: 0 }).runId;
const key = (group: string) => scopedKey(RUN, group);

function assembled(episode: string, { group = 'g1', incomplete = false, groupSize }: { group?: string; incomplete?: boolean; groupSize?: number } = {}): Item {
  const s = step({ episode, index: 0, group, end: incomplete ? undefined : 'terminated', groupSize });
  const { trajectory } = trajectoryFromSteps([s]);
  return { trajectory, sources: [s], closedBy: incomplete ? 'idle' : 'ended', complete: !incomplete };
}

const RULES: GroupAssemblyRules = {
  groupSize: 3,
  minGroupSize: 2,
  idleCloseMs: undefined,
  includeIncomplete: false,
  maxOpenGroups: 10,
  rememberClosedGroups: 10,
  flushOnComplete: true,
};

const arrive = (item: Item): GroupEvent<Item> => ({ kind: 'trajectory', item, trajectory: item.trajectory });

/** Effects in a comparable form: kinds with the group or the drop they concern. */
function brief(effects: readonly GroupEffect<Item>[]): string[] {
  return effects.map((e) => {
    if (e.kind === 'emit') return `emit ${e.group.groupId} [${e.group.members.map((m) => m.trajectory.episodeId)}] ${e.group.closedBy}${e.group.partial ? ' partial' : ''}`;
    if (e.kind === 'drop') return `drop ${e.drop.reason} ${e.drop.groupId} [${e.drop.items.map((m) => m.trajectory.episodeId)}]`;
    if (e.kind === 'closed') return `closed ${e.key.split('\u0000')[1]} ${e.reason} open=${e.openGroups}`;
    if (e.kind === 'opened') return `opened ${e.key.split('\u0000')[1]} open=${e.openGroups}`;
    return `${e.kind} ${e.key.split('\u0000')[1]}`;
  });
}

test('a group opens on its first trajectory and closes full on its expected size', () => {
  const state = createGroupAssembly<Item>(RULES);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('a')))), ['opened g1 open=1']);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('b')))), []);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('c')))), ['closed g1 full open=0', 'emit g1 [a,b,c] full']);
  assert.equal(state.open.size, 0);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('d')))), ['drop late g1 [d]']);
});

test('a timeout closes the group: emitted partial with minGroupSize members, dropped too small below it', () => {
  const state = createGroupAssembly<Item>(RULES);
  for (const item of [assembled('a'), assembled('b'), assembled('p', { group: 'g2' })]) groupAssemblyStep(state, arrive(item));
  assert.deepEqual(brief(groupAssemblyStep(state, { kind: 'timeout', key: key('g1') })), ['closed g1 timeout open=1', 'emit g1 [a,b] timeout partial']);
  assert.deepEqual(brief(groupAssemblyStep(state, { kind: 'timeout', key: key('g2') })), ['closed g2 timeout open=0', 'drop too-small g2 [p]']);
  assert.deepEqual(groupAssemblyStep(state, { kind: 'timeout', key: key('g2') }), [], 'a group already closed');
});

test('an incomplete trajectory counts as arrived but is dropped; a repeated episode is dropped as duplicate', () => {
  const state = createGroupAssembly<Item>(RULES);
  groupAssemblyStep(state, arrive(assembled('a')));
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('a')))), ['drop duplicate g1 [a]']);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('i', { incomplete: true })))), ['drop incomplete g1 [i]']);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('b')))), ['closed g1 full open=0', 'emit g1 [a,b] full partial']);
});

test('the oldest open group is evicted when one more would pass maxOpenGroups', () => {
  const state = createGroupAssembly<Item>({ ...RULES, maxOpenGroups: 2 });
  groupAssemblyStep(state, arrive(assembled('a')));
  groupAssemblyStep(state, arrive(assembled('b')));
  groupAssemblyStep(state, arrive(assembled('p', { group: 'g2' })));
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('x', { group: 'g3' })))), ['closed g1 evicted open=1', 'emit g1 [a,b] evicted partial', 'opened g3 open=2']);
});

test('with idleCloseMs, each trajectory of a group without an announced size re-arms its idle close; an announced size disarms it', () => {
  const state = createGroupAssembly<Item>({ ...RULES, idleCloseMs: 5, groupSize: 8 });
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('a')))), ['opened g1 open=1', 'arm-idle g1']);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('b', { groupSize: 4 })))), ['disarm-idle g1']);
  assert.deepEqual(brief(groupAssemblyStep(state, arrive(assembled('p', { group: 'g2' })))), ['opened g2 open=2', 'arm-idle g2']);
  assert.deepEqual(groupAssemblyStep(state, { kind: 'idle', key: key('g2'), episodesOpen: true }), [], 'an episode still open holds the group');
  assert.deepEqual(brief(groupAssemblyStep(state, { kind: 'idle', key: key('g2'), episodesOpen: false })), ['closed g2 idle open=1', 'drop too-small g2 [p]']);
});

test('completion closes every open group, oldest first, unless flushOnComplete is off', () => {
  const state = createGroupAssembly<Item>(RULES);
  for (const item of [assembled('a'), assembled('b'), assembled('p', { group: 'g2' })]) groupAssemblyStep(state, arrive(item));
  const kept = createGroupAssembly<Item>({ ...RULES, flushOnComplete: false });
  groupAssemblyStep(kept, arrive(assembled('a')));
  assert.deepEqual(groupAssemblyStep(kept, { kind: 'complete' }), []);
  assert.deepEqual(brief(groupAssemblyStep(state, { kind: 'complete' })), [
    'closed g1 source-completed open=1',
    'emit g1 [a,b] source-completed partial',
    'closed g2 source-completed open=0',
    'drop too-small g2 [p]',
  ]);
});

test('the stats follow the effects', () => {
  const state = createGroupAssembly<Item>(RULES);
  const stats = createGroupAssemblyStats();
  const events: GroupEvent<Item>[] = [
    arrive(assembled('a')),
    arrive(assembled('a')),
    arrive(assembled('p', { group: 'g2' })),
    { kind: 'timeout', key: key('g2') },
    arrive(assembled('b')),
    arrive(assembled('c')),
  ];
  for (const event of events) for (const effect of groupAssemblyStep(state, event)) countGroupEffect(stats, effect);
  assert.deepEqual(stats, {
    trajectories: 0,
    groups: 1,
    partialGroups: 0,
    droppedGroups: 1,
    openGroups: 0,
    dropped: { 'too-small': 1, incomplete: 0, late: 0, duplicate: 1 },
    closedBy: { full: 1, idle: 0, timeout: 1, evicted: 0, 'source-completed': 0 },
  });
});

function summary(g: TrajectoryGroup<Item>) {
  return { group: g.groupId, members: g.members.map((m) => m.trajectory.episodeId), closedBy: g.closedBy };
}

describe('assembleGroups timers', () => {
  test('an evicted group’s timeout is cancelled; the new group’s timeout counts from its own first trajectory', () => {
    const scheduler = createTestScheduler();
    const drops: string[] = [];
    const onDrop = (d: GroupDrop<Item>) => drops.push(`${scheduler.now()} ${d.reason} ${d.groupId}`);
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('  a-b-p------------', { a: assembled('a'), b: assembled('b'), p: assembled('p', { group: 'g2' }) });
      const expected = '    ----x------------';
      //                    p evicts g1 at frame 4; g1's timeout (frame 6) is gone, g2 times out at 4 + 6 = 10, too small
      const values = { x: { group: 'g1', members: ['a', 'b'], closedBy: 'evicted' } };
      const groups = source.pipe(assembleGroups({ groupSize: 4, groupTimeoutMs: 6, maxOpenGroups: 1, scheduler, onDrop }), map(summary));
      expectObservable(groups).toBe(expected, values);
    });
    assert.deepEqual(drops, ['10 too-small g2']);
  });

  test('an announced size cancels the idle close armed by an earlier trajectory: the group waits for its size', () => {
    const scheduler = createTestScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('  a-b--------c-----', { a: assembled('a'), b: assembled('b', { groupSize: 3 }), c: assembled('c') });
      const expected = '    -----------x-----';
      const values = { x: { group: 'g1', members: ['a', 'b', 'c'], closedBy: 'full' } };
      expectObservable(source.pipe(assembleGroups({ groupSize: 8, groupTimeoutMs: 100, idleCloseMs: 3, scheduler }), map(summary))).toBe(expected, values);
    });
  });

  test('a throwing onDrop fired by a timeout ends the stream with that error', () => {
    const scheduler = createTestScheduler();
    const failure = new Error('ack failed');
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('  a--------', { a: assembled('a') });
      const onDrop = () => {
        throw failure;
      };
      expectObservable(source.pipe(assembleGroups({ groupSize: 4, groupTimeoutMs: 5, scheduler, onDrop }), map(summary))).toBe('-----#', undefined, failure);
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });
});
