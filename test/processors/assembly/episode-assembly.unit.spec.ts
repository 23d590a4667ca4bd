// The trajectory assembler's decisions (episode-assembly.ts) event by event, without RxJS; then marble tests
// of the operator's idle watch where the decisions and the timer meet.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { map } from 'rxjs';
import type { StepEvent } from '../../../schemas/index.js';
import { assembleTrajectories, createAssemblyStats, GroupOpenEpisodes, type AssembledTrajectory } from '../../../processors/assembly/index.js';
import {
  countEpisodeEffect,
  createEpisodeAssembly,
  episodeAssemblyStep,
  type EpisodeAssemblyRules,
  type EpisodeEffect,
  type EpisodeEvent,
} from '../../../processors/assembly/episode-assembly.js';
import { scopedKey } from '../../../processors/assembly/recently-closed.js';
import { createTestScheduler } from './test-scheduler.js';
import { step } from './steps.js';

const RUN = step({ episode: 'x', index: 0 }).runId;
const key = (episode: string) => scopedKey(RUN, episode);

const RULES: EpisodeAssemblyRules = { idleTimeoutMs: 10, maxOpenEpisodes: 10, rememberClosedEpisodes: 10, flushOnComplete: true, countGroups: false };

const arrive = (s: StepEvent, now = 0): EpisodeEvent<StepEvent> => ({ kind: 'step', item: s, step: s, now });

/** Effects in a comparable form. */
function brief(effects: readonly EpisodeEffect<StepEvent>[]): string[] {
  return effects.map((e) => {
    if (e.kind === 'emit') return `emit ${e.assembled.trajectory.episodeId} ${e.assembled.trajectory.outcome} ${e.assembled.closedBy} sources=${e.assembled.sources.length}`;
    if (e.kind === 'watch') return `watch ${e.key.split('\u0000')[1]} in ${e.delay}`;
    if (e.kind === 'closed') return `closed ${e.key.split('\u0000')[1]}${e.group ? ` of ${e.group.groupId}` : ''} open=${e.openEpisodes}`;
    if (e.kind === 'opened') return `opened${e.group ? ` in ${e.group.groupId}` : ''} open=${e.openEpisodes}`;
    if (e.kind === 'late') return `late ${e.item.episodeId}/${e.item.stepIndex}`;
    return e.kind;
  });
}

test('an episode opens with a watch, closes when whole; a repeat is a duplicate; a step after the close is late', () => {
  const state = createEpisodeAssembly<StepEvent>(RULES);
  assert.deepEqual(brief(episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 1, end: 'terminated' })))), ['opened open=1', 'watch e1 in 10']);
  assert.deepEqual(brief(episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 1, end: 'terminated' })))), ['duplicate']);
  assert.deepEqual(brief(episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 0 })))), ['closed e1 open=0', 'emit e1 terminated ended sources=3']);
  assert.deepEqual(brief(episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 2 })))), ['late e1/2']);
});

test('a watch that fires early sleeps for the rest of the idle timeout; one that fires late closes the episode idle', () => {
  const state = createEpisodeAssembly<StepEvent>(RULES);
  episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 0 }), 0));
  episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 1 }), 4));
  assert.deepEqual(brief(episodeAssemblyStep(state, { kind: 'watch', key: key('e1'), now: 10 })), ['watch e1 in 4']);
  assert.deepEqual(brief(episodeAssemblyStep(state, { kind: 'watch', key: key('e1'), now: 14 })), ['closed e1 open=0', 'emit e1 incomplete idle sources=2']);
  assert.deepEqual(episodeAssemblyStep(state, { kind: 'watch', key: key('e1'), now: 30 }), [], 'an episode already closed');
});

test('a duplicate is no activity: it does not push the idle close back', () => {
  const state = createEpisodeAssembly<StepEvent>(RULES);
  episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 0 }), 0));
  episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 0 }), 8));
  assert.deepEqual(brief(episodeAssemblyStep(state, { kind: 'watch', key: key('e1'), now: 10 })), ['closed e1 open=0', 'emit e1 incomplete idle sources=2']);
});

test('beyond maxOpenEpisodes the episode idle longest is evicted; with countGroups the effects name the groups', () => {
  const state = createEpisodeAssembly<StepEvent>({ ...RULES, maxOpenEpisodes: 2, countGroups: true });
  episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 0 })));
  episodeAssemblyStep(state, arrive(step({ episode: 'e2', index: 0, group: 'g2' })));
  episodeAssemblyStep(state, arrive(step({ episode: 'e1', index: 1 })));
  assert.deepEqual(brief(episodeAssemblyStep(state, arrive(step({ episode: 'e3', index: 0, group: 'g3' })))), [
    'closed e2 of g2 open=1',
    'emit e2 incomplete evicted sources=1',
    'opened in g3 open=2',
    'watch e3 in 10',
  ]);
  assert.deepEqual(
    [...state.groupOf.values()].map((g) => g.groupId),
    ['g1', 'g3'],
  );
});

test('completion closes every open episode unless flushOnComplete is off; the stats follow the effects', () => {
  const state = createEpisodeAssembly<StepEvent>(RULES);
  const stats = createAssemblyStats();
  const events: EpisodeEvent<StepEvent>[] = [
    arrive(step({ episode: 'e1', index: 0 })),
    arrive(step({ episode: 'e1', index: 0 })),
    arrive(step({ episode: 'e2', index: 0, end: 'truncated' })),
    arrive(step({ episode: 'e2', index: 1 })),
    arrive(step({ episode: 'e3', index: 2 })),
    { kind: 'complete' },
  ];
  for (const event of events) for (const effect of episodeAssemblyStep(state, event)) countEpisodeEffect(stats, effect);
  assert.deepEqual(stats, {
    ...createAssemblyStats(),
    duplicates: 1,
    lateSteps: 1,
    trajectories: 3,
    truncated: 1,
    incomplete: 2,
    flushedOnComplete: 2,
    gaps: 2,
    openEpisodes: 0,
  });
  const kept = createEpisodeAssembly<StepEvent>({ ...RULES, flushOnComplete: false });
  episodeAssemblyStep(kept, arrive(step({ episode: 'e1', index: 0 })));
  assert.deepEqual(episodeAssemblyStep(kept, { kind: 'complete' }), []);
});

function summary(out: AssembledTrajectory<StepEvent>) {
  return { episode: out.trajectory.episodeId, closedBy: out.closedBy, steps: out.trajectory.steps.map((s) => s.stepIndex) };
}

describe('assembleTrajectories idle watch', () => {
  test('steps keep an episode open past the first watch; it closes idleTimeoutMs after its last step', () => {
    const scheduler = createTestScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const steps = { a: step({ episode: 'e1', index: 0 }), b: step({ episode: 'e1', index: 1 }), c: step({ episode: 'e1', index: 2 }) };
      const source = hot('  a--b--c------------', steps);
      const expected = '    ----------------x--';
      //                    watch at 10 finds c (frame 6) 4 idle, sleeps 6 more: closed at 16
      const values = { x: { episode: 'e1', closedBy: 'idle', steps: [0, 1, 2] } };
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 10, scheduler }), map(summary))).toBe(expected, values);
    });
  });

  test('an evicted episode’s watch is cancelled, and its group’s open-episode count released', () => {
    const scheduler = createTestScheduler();
    const open = new GroupOpenEpisodes();
    const stats = createAssemblyStats();
    scheduler.run(({ hot, expectObservable }) => {
      const steps = { a: step({ episode: 'e1', index: 0, group: 'g1' }), b: step({ episode: 'e2', index: 0, group: 'g2' }) };
      const source = hot('  a-b----------------', steps);
      const expected = '    --x---------y------';
      //                    e1 evicted at 2 (its watch at 10 gone); e2 idle at 2 + 10 = 12
      const values = { x: { episode: 'e1', closedBy: 'evicted', steps: [0] }, y: { episode: 'e2', closedBy: 'idle', steps: [0] } };
      const trajectories = source.pipe(assembleTrajectories({ idleTimeoutMs: 10, maxOpenEpisodes: 1, openEpisodesByGroup: open, scheduler, stats }), map(summary));
      expectObservable(trajectories).toBe(expected, values);
    });
    assert.equal(open.size, 0);
    assert.equal(stats.evicted, 1);
    assert.equal(stats.idleClosed, 1);
  });
});
