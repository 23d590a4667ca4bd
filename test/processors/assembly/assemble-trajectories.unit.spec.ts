import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Subject, firstValueFrom, from, map, toArray } from 'rxjs';
import type { StepEvent } from '../../../schemas/index.js';
import { validateEvent } from '../../../schemas/index.js';
import { assembleTrajectories, createAssemblyStats, type AssembledTrajectory } from '../../../processors/assembly/index.js';
import { ConfigError } from '../../../core/errors.js';
import { createTestScheduler } from './test-scheduler.js';
import { step } from './steps.js';

/** What the marble tests compare: the shape of each output, not its every field. */
function summary<T>(out: AssembledTrajectory<T>) {
  return {
    episode: out.trajectory.episodeId,
    outcome: out.trajectory.outcome,
    steps: out.trajectory.steps.map((s) => s.stepIndex),
    gaps: out.trajectory.gapCount,
    sources: out.sources.length,
    closedBy: out.closedBy,
    complete: out.complete,
  };
}

describe('assembleTrajectories', () => {
  test('emits an episode as soon as its terminated step and every earlier step have arrived, whatever their order', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const steps = {
        c: step({ episode: 'e1', index: 2, end: 'terminated', reward: 1 }),
        a: step({ episode: 'e1', index: 0 }),
        b: step({ episode: 'e1', index: 1 }),
      };
      const source = cold('  c-a-b-|', steps);
      const expected = '     ----x-|';
      const values = {
        x: { episode: 'e1', outcome: 'terminated', steps: [0, 1, 2], gaps: 0, sources: 3, closedBy: 'ended', complete: true },
      };
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 100, scheduler: testScheduler }), map(summary))).toBe(expected, values);
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });

  test('closes an episode with no new step for idleTimeoutMs as incomplete, counting from its last step', () => {
    const testScheduler = createTestScheduler();
    const stats = createAssemblyStats();
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const steps = { a: step({ episode: 'e1', index: 0 }), b: step({ episode: 'e1', index: 1 }) };
      const source = hot('  a-------b---------------', steps);
      const expected = '    ------------------x---';
      //                    step b at frame 8 + idle 10 = frame 18
      const values = {
        x: { episode: 'e1', outcome: 'incomplete', steps: [0, 1], gaps: 0, sources: 2, closedBy: 'idle', complete: false },
      };
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 10, scheduler: testScheduler, stats }), map(summary))).toBe(expected, values);
      expectSubscriptions(source.subscriptions).toBe('^');
    });
    assert.equal(stats.idleClosed, 1);
    assert.equal(stats.incomplete, 1);
    assert.equal(stats.openEpisodes, 0);
  });

  test('waits up to the idle timeout for a step missing before the end, then emits with the gap; the straggler is late', () => {
    const testScheduler = createTestScheduler();
    const stats = createAssemblyStats();
    const discarded: Array<[number, string]> = [];
    testScheduler.run(({ hot, expectObservable }) => {
      const steps = {
        a: step({ episode: 'e1', index: 0 }),
        c: step({ episode: 'e1', index: 2, end: 'terminated' }),
        b: step({ episode: 'e1', index: 1 }),
      };
      const source = hot('  a-c-------------b--', steps);
      const expected = '    ------------x------';
      const values = {
        x: { episode: 'e1', outcome: 'incomplete', steps: [0, 2], gaps: 1, sources: 2, closedBy: 'idle', complete: false },
      };
      const onDiscard = (item: StepEvent, reason: string) => discarded.push([item.stepIndex, reason]);
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 10, scheduler: testScheduler, stats, onDiscard }), map(summary))).toBe(expected, values);
    });
    assert.deepEqual(discarded, [[1, 'late']]);
    assert.equal(stats.gaps, 1);
    assert.equal(stats.lateSteps, 1);
  });

  test('drops a repeated eventId and a repeated stepIndex, keeps them in sources for acking, and counts them', () => {
    const testScheduler = createTestScheduler();
    const stats = createAssemblyStats();
    const first = step({ episode: 'e1', index: 1, reward: 0.5 });
    testScheduler.run(({ cold, expectObservable }) => {
      const steps = {
        a: step({ episode: 'e1', index: 0 }),
        r: step({ episode: 'e1', index: 0 }), // producer retry: same eventId
        b: first,
        d: { ...first, eventId: 'e1/1-rerun', reward: 7 }, // same episode and stepIndex, new eventId
        c: step({ episode: 'e1', index: 2, end: 'truncated' }),
      };
      const source = cold(' a-r-b-d-c|', steps);
      const expected = '    --------x|';
      const values = {
        x: { episode: 'e1', outcome: 'truncated', steps: [0, 1, 2], gaps: 0, sources: 5, closedBy: 'ended', complete: true },
      };
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 100, scheduler: testScheduler, stats }), map(summary))).toBe(expected, values);
    });
    assert.equal(stats.duplicates, 2);
    assert.equal(stats.truncated, 1);
  });

  test('keeps the first copy of a duplicated step: totals do not change', async () => {
    const s1 = step({ episode: 'e1', index: 1, reward: 0.5 });
    const steps = [step({ episode: 'e1', index: 0 }), s1, { ...s1, eventId: 'other', reward: 9 }, step({ episode: 'e1', index: 2, end: 'terminated', reward: 1 })];
    const [out] = await firstValueFrom(from(steps).pipe(assembleTrajectories(), toArray()));
    assert.equal(out!.trajectory.totalReward, 1.5);
    assert.equal(out!.trajectory.metrics.duplicateSteps, 1);
  });

  test('closes the episode idle longest when a new one would exceed maxOpenEpisodes', () => {
    const testScheduler = createTestScheduler();
    const stats = createAssemblyStats();
    testScheduler.run(({ hot, expectObservable }) => {
      const steps = {
        a: step({ episode: 'e1', index: 0 }),
        b: step({ episode: 'e2', index: 0 }),
        c: step({ episode: 'e1', index: 1 }), // e1 active again: e2 is now the one idle longest
        d: step({ episode: 'e3', index: 0 }),
      };
      const source = hot('  abcd----', steps);
      const unsub = '       ^-------!';
      const expected = '    ---x----';
      const values = {
        x: { episode: 'e2', outcome: 'incomplete', steps: [0], gaps: 0, sources: 1, closedBy: 'evicted', complete: false },
      };
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 100, maxOpenEpisodes: 2, scheduler: testScheduler, stats }), map(summary)), unsub).toBe(expected, values);
    });
    assert.equal(stats.evicted, 1);
  });

  test('on source completion emits the open episodes as incomplete, or drops them unacked with flushOnComplete false', () => {
    const steps = {
      a: step({ episode: 'e1', index: 0 }),
      b: step({ episode: 'e2', index: 0 }),
      c: step({ episode: 'e2', index: 1, end: 'terminated' }),
    };
    const flushed = {
      x: { episode: 'e2', outcome: 'terminated', steps: [0, 1], gaps: 0, sources: 2, closedBy: 'ended', complete: true },
      y: { episode: 'e1', outcome: 'incomplete', steps: [0], gaps: 0, sources: 1, closedBy: 'source-completed', complete: false },
    };
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const source = cold('  abc-|', steps);
      const expected = '     --x-(y|)';
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 100, scheduler: testScheduler }), map(summary))).toBe(expected, flushed);
    });
    createTestScheduler().run(({ cold, expectObservable }) => {
      const source = cold('  abc-|', steps);
      const expected = '     --x-|';
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 100, flushOnComplete: false }), map(summary))).toBe(expected, flushed);
    });
  });

  test('unsubscribing tears down the source and clears the idle timers', () => {
    const testScheduler = createTestScheduler();
    const stats = createAssemblyStats();
    testScheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      const steps = { a: step({ episode: 'e1', index: 0 }), b: step({ episode: 'e2', index: 0 }) };
      const source = hot('  a-b---------------', steps);
      const unsub = '       ^-----!           ';
      expectObservable(source.pipe(assembleTrajectories({ idleTimeoutMs: 10, scheduler: testScheduler, stats }), map(summary)), unsub).toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
    // Had a timer survived the teardown, it would have fired at frame 10 or 12 and closed an episode.
    assert.equal(stats.idleClosed, 0);
    assert.equal(stats.trajectories, 0);
    assert.equal(stats.openEpisodes, 0);
  });

  test('a throwing stepOf ends the stream with that error and unsubscribes the source', () => {
    const testScheduler = createTestScheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('  a-b-|', { a: { bad: false }, b: { bad: true } });
      const stepOf = (item: { bad: boolean }) => {
        if (item.bad) throw new TypeError('not a step');
        return step({ episode: 'e1', index: 0 });
      };
      expectObservable(source.pipe(assembleTrajectories({ stepOf, idleTimeoutMs: 100, scheduler: testScheduler }), map(summary))).toBe(
        '--#',
        undefined,
        new TypeError('not a step'),
      );
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  test('works over envelopes: every envelope is acked, but only once its trajectory has been handled', () => {
    interface FakeEnvelope {
      readonly value: StepEvent;
      acked: number;
      ack(): void;
    }
    const envelope = (value: StepEvent): FakeEnvelope => ({
      value,
      acked: 0,
      ack() {
        this.acked++;
      },
    });
    const envelopes = [
      envelope(step({ episode: 'e1', index: 1, end: 'terminated' })),
      envelope(step({ episode: 'e2', index: 0 })),
      envelope(step({ episode: 'e1', index: 1 })), // duplicate: travels with e1's trajectory
      envelope(step({ episode: 'e1', index: 0 })), // completes e1
      envelope(step({ episode: 'e1', index: 0 })), // after e1 closed: late, handed to onDiscard
    ];
    const input = new Subject<FakeEnvelope>();
    const handled: string[] = [];
    const subscription = input.pipe(assembleTrajectories({ stepOf: (e: FakeEnvelope) => e.value, onDiscard: (e) => e.ack() })).subscribe((out) => {
      handled.push(out.trajectory.episodeId);
      for (const source of out.sources) source.ack();
    });
    for (const e of envelopes.slice(0, 3)) input.next(e);
    assert.deepEqual(
      envelopes.map((e) => e.acked),
      [0, 0, 0, 0, 0],
      'nothing is acked while its episode is open',
    );
    input.next(envelopes[3]!);
    assert.deepEqual(handled, ['e1']);
    assert.deepEqual(
      envelopes.map((e) => e.acked),
      [1, 0, 1, 1, 0],
    );
    input.next(envelopes[4]!);
    assert.deepEqual(
      envelopes.map((e) => e.acked),
      [1, 0, 1, 1, 1],
    );
    subscription.unsubscribe(); // also clears e2's (real) idle timer
    assert.equal(envelopes[1]!.acked, 0, 'an episode dropped by teardown stays unacked, so it is delivered again');
  });

  test('builds trajectories that validate, with totals from the steps', async () => {
    const steps = [
      { ...step({ episode: 'e1', index: 0, reward: 0.25 }), actionValid: false, policyVersion: 3 },
      { ...step({ episode: 'e1', index: 1, reward: -0.5 }), policyVersion: 5 },
      { ...step({ episode: 'e1', index: 2, end: 'terminated', reward: 1, success: true, groupSize: 4 }), policyVersion: 4 },
    ];
    const [out] = await firstValueFrom(from([steps[2]!, steps[0]!, steps[1]!]).pipe(assembleTrajectories(), toArray()));
    const t = out!.trajectory;
    assert.deepEqual(validateEvent('trajectory', t), { ok: true });
    assert.equal(t.totalReward, 0.75);
    assert.equal(t.success, true);
    assert.equal(t.invalidActions, 1);
    assert.equal(t.stepCount, 3);
    assert.equal(t.minPolicyVersion, 3);
    assert.equal(t.maxPolicyVersion, 5);
    assert.equal(t.firstEventTimeMs, Math.min(...steps.map((s) => s.eventTimeMs)));
    assert.equal(t.lastEventTimeMs, Math.max(...steps.map((s) => s.eventTimeMs)));
    assert.equal(t.metrics.groupSize, 4);
    assert.equal(t.groupId, 'g1');
  });

  test('leaves steps after the terminal step out of the trajectory and counts them', async () => {
    const stats = createAssemblyStats();
    const steps = [step({ episode: 'e1', index: 3 }), step({ episode: 'e1', index: 1, end: 'terminated' }), step({ episode: 'e1', index: 0 })];
    const [out] = await firstValueFrom(from(steps).pipe(assembleTrajectories({ stats }), toArray()));
    assert.deepEqual(
      out!.trajectory.steps.map((s) => s.stepIndex),
      [0, 1],
    );
    assert.equal(out!.sources.length, 3);
    assert.equal(stats.stepsAfterEnd, 1);
  });

  test('rejects options that cannot work, saying what would', () => {
    assert.throws(() => assembleTrajectories({ idleTimeoutMs: 0 }), ConfigError);
    assert.throws(() => assembleTrajectories({ maxOpenEpisodes: 0 }), /maxOpenEpisodes must be an integer >= 1/);
  });

  test("property: any arrival order of an episode's steps, with repeats, assembles to the same trajectory", async () => {
    const episodes = fc.integer({ min: 1, max: 8 }).chain((length) => {
      const steps = Array.from({ length }, (_, i) => step({ episode: `p${length}`, index: i, reward: i * 0.25, end: i === length - 1 ? 'terminated' : undefined }));
      return fc.tuple(
        fc.constant(steps),
        fc.shuffledSubarray(steps, { minLength: length, maxLength: length }),
        fc.array(fc.nat({ max: length - 1 }), { maxLength: 3 }), // steps to repeat (positions in the arrival order)
      );
    });
    const assemble = async (steps: StepEvent[]) => await firstValueFrom(from(steps).pipe(assembleTrajectories(), toArray()));
    await fc.assert(
      fc.asyncProperty(episodes, async ([inOrder, shuffled, repeats]) => {
        const [reference] = await assemble(inOrder);
        // Repeat copies of steps that already arrived, before the step that completes the episode (a
        // copy arriving after it would be late, not a duplicate).
        const last = shuffled.length - 1;
        const copies = repeats.filter((i) => i < last).map((i) => shuffled[i]!);
        const arrival = [...shuffled.slice(0, last), ...copies, shuffled[last]!];
        const outputs = await assemble(arrival);
        assert.equal(outputs.length, 1);
        const { metrics, ...rest } = outputs[0]!.trajectory;
        const { metrics: referenceMetrics, ...referenceRest } = reference!.trajectory;
        assert.deepEqual(rest, referenceRest);
        assert.equal(metrics.duplicateSteps, copies.length);
        assert.equal(metrics.durationMs, referenceMetrics.durationMs);
        assert.equal(outputs[0]!.sources.length, arrival.length);
      }),
      { seed: 20261129, numRuns: 200 },
    );
  });
});
