// Unit: the template-collapse detector over the learner's RAGEN-2 cross-scoring — a synthetic run whose
// Î/log N falls from ~0.8 to ~0.2 at a known measurement fires there once; healthy noisy runs never fire;
// a from-scratch run (early ≈ 0) that rises and falls fires at the fall, measured against its peak, a level
// held across the recent window (one lucky estimate is none), and only while the run is declining;
// steps without cross-scoring are skipped; through the engine, from learner_step metrics.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildDetectorsConfig } from '../../detectors/config.js';
import { CollapseEngine } from '../../detectors/engine.js';
import { MutualInformationDetector, mutualInformationConfig, mutualInformationPoint, type MutualInformationPoint } from '../../detectors/mutual-information.js';
import { runDetector } from '../../detectors/types.js';
import { SEEDS, gaussian, learnerStepEvent } from './synthetic.js';

/** Cross-scoring every 5 updates over 16 prompts; u = Î/log N around `level` (±0.05 noise), dropping to 0.2 at measurement `dropAt`. */
function measurements(count: number, seed: number, { dropAt, level = 0.8 }: { dropAt?: number; level?: number } = {}): MutualInformationPoint[] {
  const noise = gaussian(seed);
  const upperBound = Math.log(16);
  return Array.from({ length: count }, (_, i) => {
    const u = (dropAt !== undefined && i >= dropAt ? 0.2 : level) + 0.05 * noise();
    return { at: i * 5, mi: u * upperBound, upperBound, retrievalAccuracy: u, chance: 1 / 16 };
  });
}

describe('template collapse from cross-scoring (Î / log N)', () => {
  test('Î/log N falling from 0.8 to 0.2 at measurement 20 (update 100) fires there or at the next one (the recent level averages 2) once, for every seed', () => {
    for (const seed of SEEDS) {
      const alerts = runDetector(new MutualInformationDetector(), measurements(40, seed, { dropAt: 20 }));
      assert.equal(alerts.length, 1, `seed ${seed}`);
      assert.ok(['template_collapse_mi@100', 'template_collapse_mi@105'].includes(`${alerts[0]!.kind}@${alerts[0]!.at}`), `seed ${seed}: ${alerts[0]!.at}`);
      assert.match(alerts[0]!.message, /retrieval accuracy .* against chance 0\.0625/);
      assert.ok(alerts[0]!.evidence.early! > 0.7 && alerts[0]!.evidence.recent! < 0.5);
    }
  });

  test('healthy noisy runs (10 seeds) raise nothing; a run whose replies never depended on the input raises nothing', () => {
    for (const seed of SEEDS) assert.deepEqual(runDetector(new MutualInformationDetector(), measurements(40, seed)), [], `seed ${seed}`);
    const blind = measurements(40, 1, { level: 0.01 }).map((p) => ({ ...p, mi: Math.abs(p.mi) * 0.01 }));
    assert.deepEqual(runDetector(new MutualInformationDetector(), blind), []);
  });

  test('from scratch (early ≈ 0): measured against the peak — the sequences `bench collapse` measured (2026-11-30)', () => {
    // Î/log N every 2nd update, as bench collapse printed it (iteration:value); the detector reads u clamped at 0.
    const at = (values: number[]) => values.map((u, i) => ({ at: 2 * i, mi: u * Math.log(8), upperBound: Math.log(8), retrievalAccuracy: Number.NaN, chance: 0.125 }));
    // GRPO, default configuration: rises to ≈ 0.2 while it learns (16–24) and loses it when its success falls (fell at 28).
    const grpo = at([0, -0, 0.001, 0.002, -0.018, -0.011, 0.007, 0.001, 0.063, 0.211, 0.204, 0.197, 0.199, 0.001, -0, 0.008, 0.058, 0.075, -0.004, 0.004]);
    const alerts = runDetector(new MutualInformationDetector(), grpo);
    assert.deepEqual(
      alerts.map((a) => `${a.kind}@${a.at}`),
      ['template_collapse_mi@26'],
    );
    assert.match(alerts[0]!.message, /below 0\.5 × its peak 0\.204 \(early 3\.333e-4\)/);
    // The same bench with the neighbour stem: dependence stays low (≤ 0.06 as a 2-measurement mean) until it
    // rises at the end, with no collapse of success — below minPeak, no alert.
    const stem = at([-0, 0.001, -0.004, 0.022, 0.091, 0.028, -0.018, 0.01, 0.015, 0.035, 0.053, 0.081, -0.009, 0.004, -0, 0.001, -0, -0.001, 0.105, 0.275]);
    assert.deepEqual(runDetector(new MutualInformationDetector(), stem), []);
    // A rise without a fall raises nothing.
    assert.deepEqual(runDetector(new MutualInformationDetector(), at([0, 0, 0, 0.1, 0.2, 0.3, 0.35, 0.33, 0.36, 0.34])), []);
  });

  test('the peak is a level held across the recent window: one lucky estimate among low ones sets no reference', () => {
    // Cross-scoring every 10 updates over 16 prompts, as the learner does by default; u = Î/log N.
    const at = (values: number[]) => values.map((u, i) => ({ at: 10 * i, mi: u * Math.log(16), upperBound: Math.log(16), retrievalAccuracy: Number.NaN, chance: 1 / 16 }));
    // One estimate of 0.25 among 0.03–0.1: the mean of the last two reaches 0.17, the level held across them 0.1 at most.
    const lucky = at([0, 0, 0, 0.03, 0.09, 0.06, 0.055, 0.096, 0.25, 0.036, 0.03, 0.04, 0.06, 0.05]);
    assert.deepEqual(runDetector(new MutualInformationDetector(), lucky), []);
    // The same run holding 0.25 for two measurements before losing it fires at the loss.
    const held = at([0, 0, 0, 0.03, 0.09, 0.06, 0.055, 0.25, 0.25, 0.036, 0.03, 0.04, 0.06, 0.05]);
    assert.deepEqual(
      runDetector(new MutualInformationDetector(), held).map((a) => `${a.kind}@${a.at}`),
      ['template_collapse_mi@100'],
    );
  });

  test('from scratch, a drop below the peak fires only while the run is declining; a pretrained policy drop fires regardless', () => {
    const at = (values: number[], declining: boolean) =>
      values.map((u, i) => ({ at: 10 * i, mi: u * Math.log(16), upperBound: Math.log(16), retrievalAccuracy: Number.NaN, chance: 1 / 16, declining }));
    const fromScratch = [0, 0, 0, 0.2, 0.3, 0.3, 0.3, 0.02, 0.01, 0.01];
    assert.deepEqual(runDetector(new MutualInformationDetector(), at(fromScratch, false)), []);
    assert.deepEqual(
      runDetector(new MutualInformationDetector(), at(fromScratch, true)).map((a) => `${a.kind}@${a.at}`),
      ['template_collapse_mi@80'],
    );
    const pretrained = [0.6, 0.6, 0.6, 0.6, 0.6, 0.1, 0.1, 0.1];
    assert.deepEqual(
      runDetector(new MutualInformationDetector(), at(pretrained, false)).map((a) => `${a.kind}@${a.at}`),
      ['template_collapse_mi@60'],
    );
  });

  test('only steps that carry template.* metrics are points; the config is checked', () => {
    assert.equal(mutualInformationPoint(3, { lossTokens: 10 }), null);
    assert.deepEqual(mutualInformationPoint(3, { 'template.mi': 1, 'template.miUpperBound': 2, 'template.retrievalAccuracy': 0.5, 'template.chance': 0.25 }), {
      at: 3,
      mi: 1,
      upperBound: 2,
      retrievalAccuracy: 0.5,
      chance: 0.25,
    });
    assert.throws(() => mutualInformationConfig({ dropFraction: 0.8, clearFraction: 0.5 }), /dropFraction.*clearFraction|hysteresis/);
  });

  test('through the engine, from scratch: the same drop fires when the batch reward has given back its gain, not while it never gained', () => {
    // u rises from 0 to 0.3 at update 30 (its first three measurements 0: from scratch) and drops to 0.01 from update 70; the reward stays flat at 0.2 (neither
    // improving nor declining), or climbs to 0.8 with u and falls back to 0.3 from update 60.
    const raisedWith = (fallingReward: boolean) => {
      const engine = new CollapseEngine(buildDetectorsConfig({ attributionHoldMs: 0 }));
      const kinds: string[] = [];
      for (let step = 0; step < 100; step++) {
        const climbed = step < 30 ? 0.2 + 0.02 * (step % 2) + 0.6 * (step / 30) : step >= 60 ? 0.3 : 0.8;
        const reward = fallingReward ? climbed : 0.2 + 0.02 * (step % 2);
        const event = learnerStepEvent('run-mi-scratch', step);
        const u = step < 30 ? 0 : step < 70 ? 0.3 : 0.01;
        const metrics: Record<string, number> = { ...event.metrics, 'batch.rewardMean': reward };
        if (step % 10 === 0)
          Object.assign(metrics, { 'template.mi': u * Math.log(16), 'template.miUpperBound': Math.log(16), 'template.retrievalAccuracy': 0.1, 'template.chance': 1 / 16 });
        for (const r of engine.observe({ type: 'learner_step', event: { ...event, metrics } })) if (r.alert.kind === 'template_collapse_mi') kinds.push(r.anchor);
      }
      return kinds;
    };
    assert.deepEqual(raisedWith(false), []);
    assert.deepEqual(raisedWith(true), ['step:80']);
  });

  test('through the engine: learner steps with cross-scoring every 5 updates raise template_collapse_mi at the drop', () => {
    const engine = new CollapseEngine(buildDetectorsConfig({ attributionHoldMs: 0 }));
    const points = measurements(40, 2, { dropAt: 20 });
    const raised = [];
    for (let step = 0; step < 200; step++) {
      const event = learnerStepEvent('run-mi', step);
      const point = step % 5 === 0 ? points[step / 5]! : undefined;
      const metrics = point
        ? {
            ...event.metrics,
            'template.mi': point.mi,
            'template.miUpperBound': point.upperBound,
            'template.retrievalAccuracy': point.retrievalAccuracy,
            'template.chance': point.chance,
          }
        : event.metrics;
      raised.push(...engine.observe({ type: 'learner_step', event: { ...event, metrics } }));
    }
    assert.deepEqual(
      raised.filter((r) => r.alert.kind === 'template_collapse_mi').map((r) => r.anchor),
      ['step:105'],
    );
  });
});
