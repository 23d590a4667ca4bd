// detectCollapse / detectCollapseFrom: which learner step an alert is attributed to and when it is emitted
// (marble tests on virtual time), deterministic alert ids, and the engine's bookkeeping.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { from, lastValueFrom, map, toArray } from 'rxjs';
import { buildDetectorsConfig, WITHOUT_TRAJECTORIES, type DetectorsConfigInput } from '../../detectors/config.js';
import { detectCollapse, detectCollapseFrom } from '../../detectors/detect-collapse.js';
import { CollapseEngine, type DetectorInput } from '../../detectors/engine.js';
import { alertIdOf } from '../../detectors/alert-event.js';
import { ActionWindows, actionWindowsConfig } from '../../detectors/action-windows.js';
import type { CollapseAlertEvent } from '../../schemas/index.js';
import { validateEvent } from '../../schemas/index.js';
import { createTestScheduler } from '../processors/assembly/test-scheduler.js';
import { batchTimeMs, learnerPoints, learnerStepEvent, rolloutBatchEvent, rolloutBatches, trajectoriesOfVersion } from './synthetic.js';

const RUN = 'run-op';
const off = { enabled: false };
/** Only the reward cliff, with a tiny window so a few marble frames show it. */
const cliffOnly = (extra: DetectorsConfigInput = {}) =>
  buildDetectorsConfig({
    rewardVarianceCliff: { baselineWindow: 2, minBaseline: 2, recent: 1 },
    entropy: off,
    gradNormSpike: off,
    nonFinite: off,
    responseLength: off,
    invalidActions: off,
    templateCollapse: off,
    actionRepetition: off,
    rewardSuccessGap: off,
    attributionHoldMs: 10,
    ...extra,
  });

const step = (n: number, extra: Parameters<typeof learnerStepEvent>[2] = {}): DetectorInput => ({ type: 'learner_step', event: learnerStepEvent(RUN, n, extra) });
const batch = (i: number, inGroupStd: number): DetectorInput => ({ type: 'rollout_stats', event: rolloutBatchEvent(RUN, i, { inGroupStd }) });
const summary = (a: CollapseAlertEvent) => `${a.kind}@${a.learnerStep}`;

describe('attribution hold (marbles; 1 frame = 1 ms, hold 10 ms)', () => {
  // Batches 0, 1 healthy (std 0.5), batch 2 collapsed (0.05): the cliff fires on batch 2 (event time
  // T0 + 2500), attributed to the last learner step at or before it, step 2 (T0 + 2000).
  const values = { L: step(2), a: batch(0, 0.5), b: batch(1, 0.5), c: batch(2, 0.05), M: step(3), N: step(1) };

  test('a rollout alert waits for a later learner step of its run, then goes out attributed to step 2', () => {
    createTestScheduler().run(({ hot, expectObservable }) => {
      const source = hot('  L-a-b-c---M---', values);
      const expected = '    ----------x---';
      expectObservable(source.pipe(detectCollapse(cliffOnly()), map(summary))).toBe(expected, { x: 'reward_variance_cliff@2' });
    });
  });

  test('without a later learner step it goes out after attributionHoldMs with what is known', () => {
    const scheduler = createTestScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('  L-a-b-c---------------', values);
      const expected = '    ----------------x-----';
      //                          c at 6 + 10 ms
      expectObservable(source.pipe(detectCollapse(cliffOnly(), { scheduler }), map(summary))).toBe(expected, { x: 'reward_variance_cliff@2' });
    });
  });

  test('completion releases what is held', () => {
    createTestScheduler().run(({ hot, expectObservable }) => {
      const source = hot('  L-a-b-c-|', values);
      const expected = '    --------(x|)';
      expectObservable(source.pipe(detectCollapse(cliffOnly()), map(summary))).toBe(expected, { x: 'reward_variance_cliff@2' });
    });
  });

  test('attributionHoldMs 0: emitted at once, attributed to what has been seen', () => {
    createTestScheduler().run(({ hot, expectObservable }) => {
      const source = hot('  N-a-b-c-L-M', values);
      const expected = '    ------x----';
      expectObservable(source.pipe(detectCollapse(cliffOnly({ attributionHoldMs: 0 })), map(summary))).toBe(expected, { x: 'reward_variance_cliff@1' });
    });
  });

  test('learner-step alerts are never held; every item gets one Detection, a held one later without delaying the others', () => {
    const scheduler = createTestScheduler();
    const config = cliffOnly({ nonFinite: { enabled: true } });
    const items = { ...values, n: step(3, { totalLoss: Number.NaN }) };
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('  L-a-b-c-n---', items);
      const expected = '    L-a-b---(cn)';
      const out = source.pipe(
        detectCollapseFrom(config, (input: DetectorInput) => input, { scheduler }),
        map((d) => ({ source: d.source, alerts: d.alerts.map(summary) })),
      );
      expectObservable(out).toBe(expected, {
        L: { source: items.L, alerts: [] },
        a: { source: items.a, alerts: [] },
        b: { source: items.b, alerts: [] },
        // Step 3 (T0 + 3000) settles batch 2's attribution: the held Detection goes first (arrival order).
        c: { source: items.c, alerts: ['reward_variance_cliff@2'] },
        n: { source: items.n, alerts: ['nan@3'] },
      });
    });
  });
});

describe('deterministic alerts', () => {
  function runInputs(n: number): { steps: DetectorInput[]; batches: DetectorInput[] } {
    const points = learnerPoints(n, 4, { erraticAt: 60, spikeAt: 70 });
    const stats = rolloutBatches(n, 4, { cliffAt: 40 });
    return {
      steps: points.map((p, i) => ({ type: 'learner_step', event: learnerStepEvent(RUN, i, p) })),
      batches: stats.map((b, i) => ({ type: 'rollout_stats', event: rolloutBatchEvent(RUN, i, b) })),
    };
  }
  const detectAll = async (inputs: DetectorInput[]) =>
    (await lastValueFrom(from(inputs).pipe(detectCollapse(buildDetectorsConfig()), toArray()))).sort((x, y) => x.alertId.localeCompare(y.alertId));

  test('the same events give the same alerts whatever the interleaving of the two topics', async () => {
    const { steps, batches } = runInputs(100);
    const stepsFirst = await detectAll([...steps, ...batches]);
    const batchesFirst = await detectAll([...batches, ...steps]);
    const alternating = await detectAll(steps.flatMap((s, i) => [batches[i]!, s]));
    assert.deepEqual(stepsFirst.map(summary).sort(), ['entropy_erratic@64', 'grad_norm_spike@70', 'reward_variance_cliff@44']);
    assert.deepEqual(batchesFirst, stepsFirst);
    assert.deepEqual(alternating, stepsFirst);
    for (const alert of stepsFirst) assert.deepEqual(validateEvent('collapse_alert', alert), { ok: true });
  });

  test('ids derive from run, kind and anchor; times from the inputs', async () => {
    const { steps, batches } = runInputs(100);
    const alerts = await detectAll([...steps, ...batches]);
    const spike = alerts.find((a) => a.kind === 'grad_norm_spike')!;
    assert.equal(spike.alertId, alertIdOf(RUN, 'grad_norm_spike', 'step:70'));
    assert.equal(spike.eventTimeMs, learnerStepEvent(RUN, 70).eventTimeMs);
    assert.equal(spike.policyVersion, 70);
    const cliff = alerts.find((a) => a.kind === 'reward_variance_cliff')!;
    assert.equal(cliff.alertId, alertIdOf(RUN, 'reward_variance_cliff', `batch:batch-${RUN}-44`));
    assert.equal(cliff.eventTimeMs, batchTimeMs(44));
    assert.equal(cliff.evidence.rolloutBatch, 44);
    assert.match(cliff.alertId, /^reward_variance_cliff-[0-9a-f]{24}$/);
    assert.notEqual(alertIdOf('other-run', 'grad_norm_spike', 'step:70'), spike.alertId);
  });

  test('runs are independent: interleaved runs give each its own alerts', async () => {
    const { steps } = runInputs(100);
    const healthy = learnerPoints(100, 5).map((p, i): DetectorInput => ({ type: 'learner_step', event: learnerStepEvent('run-b', i, p) }));
    const alerts = await detectAll(steps.flatMap((s, i) => [s, healthy[i]!]));
    assert.deepEqual(alerts.map((a) => `${a.runId}:${summary(a)}`).sort(), [`${RUN}:entropy_erratic@64`, `${RUN}:grad_norm_spike@70`]);
  });
});

describe('engine bookkeeping', () => {
  test("the grad-norm spike reads the learner step's reward scale: rewards × 100 with the gradient × 100 is no spike", () => {
    const observeAll = (metrics: (i: number) => Record<string, number>) => {
      const engine = new CollapseEngine(buildDetectorsConfig({ ...WITHOUT_TRAJECTORIES, entropy: off, policyShift: off, mutualInformation: off, responseLength: off }));
      return learnerPoints(100, 2).flatMap((p, i) => {
        const event = learnerStepEvent(RUN, i, { ...p, gradNorm: i >= 60 ? p.gradNorm * 100 : p.gradNorm });
        return engine.observe({ type: 'learner_step', event: { ...event, metrics: { ...event.metrics, ...metrics(i) } } }).map((r) => `${r.alert.kind}@${r.alert.at}`);
      });
    };
    const scale = (i: number) => (i >= 60 ? 100 : 1);
    assert.deepEqual(
      observeAll((i) => ({ 'batch.rewardScale': 0.7 * scale(i), 'batch.rewardMean': 0.5 * scale(i) })),
      [],
    );
    assert.deepEqual(
      observeAll((i) => ({ 'batch.rewardMean': 0.5 * scale(i) })),
      [],
      "without batch.rewardScale (an older learner), the mean's size",
    );
    assert.deepEqual(
      observeAll(() => ({ 'batch.rewardScale': 0.7, 'batch.rewardMean': 0.5 })),
      ['grad_norm_spike@60'],
    );
  });

  test('repeated learner steps are ignored; group-scope rollout stats are ignored', () => {
    const engine = new CollapseEngine(buildDetectorsConfig());
    engine.observe(step(0));
    engine.observe(step(1));
    engine.observe(step(1));
    engine.observe({ type: 'rollout_stats', event: { ...rolloutBatchEvent(RUN, 0), scope: 'group', groupId: 'g' } });
    assert.equal(engine.stats.learnerSteps, 2);
    assert.equal(engine.stats.repeatedSteps, 1);
    assert.equal(engine.stats.rolloutBatches, 0);
    assert.deepEqual(engine.attribute(RUN, learnerStepEvent(RUN, 1).eventTimeMs + 1), { learnerStep: 1, policyVersion: 1 });
    assert.deepEqual(engine.attribute(RUN, 0), { learnerStep: 0, policyVersion: 0 });
    assert.equal(engine.attributionFinal(RUN, learnerStepEvent(RUN, 1).eventTimeMs), false);
    assert.equal(engine.attributionFinal(RUN, learnerStepEvent(RUN, 0).eventTimeMs), true);
  });

  test('trajectory windows close closeLagVersions after their last version; late steps are counted; completion scores the rest', async () => {
    const trajectories = Array.from({ length: 14 }, (_, v) => trajectoriesOfVersion(RUN, v, 2, { template: v >= 8 })).flat();
    const late = trajectoriesOfVersion(RUN, 0, 9).slice(0, 1);
    const inputs: DetectorInput[] = [...trajectories, ...late].map((event) => ({ type: 'trajectory', event }));
    const engine = new CollapseEngine(buildDetectorsConfig());
    const detections = await lastValueFrom(
      from(inputs).pipe(
        detectCollapseFrom(buildDetectorsConfig(), (i: DetectorInput) => i, { engine }),
        toArray(),
      ),
    );
    assert.equal(engine.stats.lateSteps, 1);
    assert.equal(engine.stats.windowsScored, 14);
    const alerts = detections.flatMap((d) => d.alerts);
    assert.deepEqual(
      alerts.map((a) => `${a.kind}:${a.evidence.window}`),
      ['template_collapse:9'],
    );
    // Window 9 closes when version 11 arrives: the alert travels with the first trajectory of version 11.
    const carrier = detections.find((d) => d.alerts.length > 0)!;
    assert.equal((carrier.source as { event: { maxPolicyVersion: number } }).event.maxPolicyVersion, 11);
    // Windows 12 and 13 are scored at completion (no source).
    assert.equal(detections.filter((d) => d.source === null).length, 0, 'no alert in the flushed windows');
  });

  test("a window's episodes that all succeed hold template_collapse: the engine hands each window its success rate", async () => {
    const solved = Array.from({ length: 14 }, (_, v) => trajectoriesOfVersion(RUN, v, 2, { template: v >= 8 }))
      .flat()
      .map((event) => ({ ...event, success: event.steps[0]!.policyVersion >= 8 }));
    const detections = await lastValueFrom(
      from(solved.map((event): DetectorInput => ({ type: 'trajectory', event }))).pipe(
        detectCollapseFrom(buildDetectorsConfig(), (i: DetectorInput) => i),
        toArray(),
      ),
    );
    assert.deepEqual(
      detections.flatMap((d) => d.alerts.map((a) => a.kind)),
      [],
    );
  });
});

describe('trajectory windows across partitions', () => {
  const stepsOf = (version: number, n = 2) =>
    trajectoriesOfVersion(RUN, version, 1, { states: 2, perState: 1 })
      .slice(0, n)
      .flatMap((t) => t.steps);

  test('a window closes only when every declared partition is closeLagVersions past it, however unevenly they are read', () => {
    const windows = new ActionWindows(actionWindowsConfig({ closeLagVersions: 2 }), ['t/0', 't/1']);
    // Partition 0's whole backlog first: versions 0–5. Partition 1 has shown nothing: nothing closes.
    const closedEarly = [0, 1, 2, 3, 4, 5].flatMap((v) => windows.add(stepsOf(v), 't/0'));
    assert.deepEqual(closedEarly, []);
    // Partition 1 catches up to version 3: windows 0 and 1 close, each with both partitions' steps.
    const closed = [0, 1, 2, 3].flatMap((v) => windows.add(stepsOf(v), 't/1'));
    assert.deepEqual(
      closed.map((w) => [w.index, w.pairs.length]),
      [
        [0, 4],
        [1, 4],
      ],
    );
    assert.equal(windows.late, 0);
    // A step of version 0 now is late.
    windows.add(stepsOf(0, 1), 't/1');
    assert.equal(windows.late, 1);
    assert.deepEqual(
      windows.flush().map((w) => w.index),
      [2, 3, 4, 5],
    );
  });

  test('a partition that never carries the run holds at most maxOpenWindows windows open', () => {
    const windows = new ActionWindows(actionWindowsConfig({ closeLagVersions: 1, maxOpenWindows: 3 }), ['t/0', 't/1']);
    const closed = [0, 1, 2, 3, 4].flatMap((v) => windows.add(stepsOf(v), 't/0'));
    assert.deepEqual(
      closed.map((w) => w.index),
      [0, 1],
    );
    assert.equal(windows.forced, 2);
  });
});
