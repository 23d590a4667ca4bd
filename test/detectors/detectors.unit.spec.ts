// Each detector on synthetic streams: a collapse at a known point fires at an exact update (or a tight
// window), once; ten healthy noisy streams (seeds 1–10) raise nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ActionRepetitionDetector, crossInputRepetition } from '../../detectors/action-repetition.js';
import { EntropyCollapseDetector, entropyCollapseConfig } from '../../detectors/entropy-collapse.js';
import { EntropyDetector, entropyConfig } from '../../detectors/entropy-swings.js';
import { GradNormSpikeDetector, gradNormSpikeConfig } from '../../detectors/grad-norm-spike.js';
import { InvalidActionRiseDetector } from '../../detectors/invalid-action-rise.js';
import { NonFiniteDetector } from '../../detectors/non-finite.js';
import { PolicyShiftDetector, policyShiftConfig } from '../../detectors/policy-shift.js';
import { ConfigError } from '../../core/errors.js';
import { ResponseLengthDetector } from '../../detectors/response-length-collapse.js';
import { RewardVarianceCliffDetector, rewardVarianceCliffConfig, rewardVarianceCliffDefaults, type RewardVarianceCliffConfig } from '../../detectors/reward-variance-cliff.js';
import { TemplateCollapseDetector, inputDependence } from '../../detectors/template-collapse.js';
import { runDetector, type DetectorAlert } from '../../detectors/types.js';
import type { ActionPair } from '../../detectors/action-windows.js';
import { SEEDS, gaussian, learnerPoints, rolloutBatches, trajectoriesOfVersion } from './synthetic.js';

const N = 200;
const at = (alerts: readonly DetectorAlert[]) => alerts.map((a) => a.at);
const kinds = (alerts: readonly DetectorAlert[]) => alerts.map((a) => `${a.kind}@${a.at}`);
const indexed = <P extends object>(points: readonly P[]) => points.map((p, i) => ({ at: i, ...p }));

function windowPairs(version: number, seed: number, options: { template?: boolean; repeat?: boolean } = {}): ActionPair[] {
  return trajectoriesOfVersion('run', version, seed, options).map((t) => ({ input: t.steps[0]!.stateKey!, action: t.steps[0]!.action, tokens: t.steps[0]!.actionTokenIds }));
}

describe('reward-variance cliff', () => {
  test('in-group std falling to ~10% at batch 100 with the mean holding fires at batch 104 (the mean of the last 8 passes below half), once, for every seed', () => {
    for (const seed of SEEDS) {
      const alerts = runDetector(new RewardVarianceCliffDetector(), indexed(rolloutBatches(N, seed, { cliffAt: 100 })));
      assert.deepEqual(at(alerts), [104], `seed ${seed}`);
      const [alert] = alerts;
      assert.equal(alert!.kind, 'reward_variance_cliff');
      assert.equal(alert!.severity, 'warning');
      assert.ok(alert!.value < alert!.threshold);
      assert.ok(Math.abs(alert!.evidence.baselineStd! - 0.45) < 0.03, `baseline ≈ 0.45, got ${alert!.evidence.baselineStd}`);
    }
  });

  test('healthy noisy batches (10 seeds) raise nothing', () => {
    for (const seed of SEEDS) assert.deepEqual(runDetector(new RewardVarianceCliffDetector(), indexed(rolloutBatches(N, seed))), [], `seed ${seed}`);
  });

  test("under FrozenLake's batch-to-batch noise (CV 0.4) few healthy runs fire, fewer than with a recent mean of 3, and a cliff still fires within 6 batches", () => {
    const seeds = Array.from({ length: 100 }, (_, i) => i + 1);
    const firing = (config: RewardVarianceCliffConfig) =>
      seeds.filter((seed) => runDetector(new RewardVarianceCliffDetector(config), indexed(rolloutBatches(110, seed, { noise: 0.4 }))).length > 0).length;
    const defaults = firing(rewardVarianceCliffDefaults);
    assert.ok(defaults <= 15, `${defaults} of 100 healthy runs fired`);
    assert.ok(firing(rewardVarianceCliffConfig({ recent: 3 })) >= 3 * Math.max(defaults, 10), 'a mean of 3 batches fires on far more');
    const delays = seeds.map((seed) => {
      const alert = runDetector(new RewardVarianceCliffDetector(), indexed(rolloutBatches(110, 1000 + seed, { cliffAt: 60, noise: 0.4 }))).find((a) => a.at >= 60);
      return alert ? alert.at - 60 : Number.POSITIVE_INFINITY;
    });
    assert.ok(delays.filter((d) => d <= 6).length >= 95, `delays ${delays.join(' ')}`);
  });

  test('std and mean collapsing together is reward collapse, not the early warning: no alert', () => {
    const batches = indexed(rolloutBatches(N, 1, { cliffAt: 100 }).map((b, i) => (i >= 100 ? { ...b, rewardMean: 0.05 } : b)));
    assert.deepEqual(runDetector(new RewardVarianceCliffDetector(), batches), []);
  });

  test('groups agreeing because nearly every rollout succeeds is a solved task, not a cliff: no alert', () => {
    const batches = indexed(rolloutBatches(N, 1, { cliffAt: 100 }).map((b, i) => ({ ...b, successRate: i >= 100 ? 0.98 : 0.5 })));
    assert.deepEqual(runDetector(new RewardVarianceCliffDetector(), batches), []);
    const unsolved = indexed(rolloutBatches(N, 1, { cliffAt: 100 }).map((b) => ({ ...b, successRate: 0.5 })));
    assert.deepEqual(at(runDetector(new RewardVarianceCliffDetector(), unsolved)), [104]);
  });

  test('warm-up: nothing before minBaseline + recent − 1 = 15 batches; a cliff during it is reported at 15 if the median baseline is still healthy', () => {
    // Cliff at 5: at batch 15 the baseline (batches 0–7) is 5 healthy, 3 low; its median is healthy.
    assert.deepEqual(at(runDetector(new RewardVarianceCliffDetector(), indexed(rolloutBatches(30, 1, { cliffAt: 5 })))), [15]);
    // Cliff at 2: the baseline is mostly low by the time it is long enough: a run that starts low never fires.
    assert.deepEqual(runDetector(new RewardVarianceCliffDetector(), indexed(rolloutBatches(30, 1, { cliffAt: 2 }))), []);
  });
});

describe('entropy swings (learner)', () => {
  test('entropy dropping to a quarter at update 100 raises nothing here: a clean step is not erratic, and a fall is read where the policy fails', () => {
    for (const seed of SEEDS) {
      assert.deepEqual(kinds(runDetector(new EntropyDetector(), indexed(learnerPoints(N, seed, { entropyDropAt: 100 })))), [], `seed ${seed}`);
    }
  });

  test('entropy swinging ±40% from update 100 fires entropy_erratic within 101–106, once', () => {
    for (const seed of SEEDS) {
      const alerts = runDetector(new EntropyDetector(), indexed(learnerPoints(N, seed, { erraticAt: 100 })));
      assert.deepEqual(
        alerts.map((a) => a.kind),
        ['entropy_erratic'],
        `seed ${seed}`,
      );
      assert.ok(alerts[0]!.at >= 101 && alerts[0]!.at <= 106, `seed ${seed}: fired at ${alerts[0]!.at}`);
    }
  });

  test('healthy slowly decaying noisy entropy (10 seeds) raises nothing', () => {
    for (const seed of SEEDS) assert.deepEqual(runDetector(new EntropyDetector(), indexed(learnerPoints(N, seed))), [], `seed ${seed}`);
  });

  test('entropy climbing from its level back to uniform at update 100 fires entropy_surge within 100–102, once (10 seeds)', () => {
    for (const seed of SEEDS) {
      // Entropy ≈ 0.7 (the healthy stream scaled down), then rising by a quarter of that per update to at most 1.9.
      const healthy = indexed(learnerPoints(N, seed)).map((p) => ({ ...p, entropy: 0.38 * p.entropy }));
      const points = healthy.map((p) => (p.at >= 100 ? { ...p, entropy: Math.min(1.9, p.entropy * (1 + 0.25 * (p.at - 99))) } : p));
      const alerts = runDetector(new EntropyDetector(), points).filter((a) => a.kind === 'entropy_surge');
      assert.equal(alerts.length, 1, `seed ${seed}`);
      assert.ok(alerts[0]!.at >= 100 && alerts[0]!.at <= 102, `seed ${seed}: fired at ${alerts[0]!.at}`);
    }
  });

  test("entropy climbing back up to the loss's floor is no surge; climbing past it is", () => {
    // Collapsed to 0.02 at update 30, then pulled back up towards the floor 0.7 from 40 (or past it, to 1.3).
    const run = (top: number) => Array.from({ length: 80 }, (_, i) => ({ at: i, floor: 0.7, entropy: i < 30 ? 0.7 : i < 40 ? 0.02 : Math.min(top, 0.02 + 0.1 * (i - 39)) }));
    assert.deepEqual(kinds(runDetector(new EntropyDetector(), run(0.69))), []);
    // Without a floor in the loss the same climb is a surge.
    const withoutFloor = run(0.69).map(({ floor: _, ...p }) => p);
    assert.deepEqual(kinds(runDetector(new EntropyDetector(), withoutFloor)), ['entropy_surge@43']);
    assert.deepEqual(kinds(runDetector(new EntropyDetector(), run(1.3))), ['entropy_surge@47']);
  });

  test('erratic swings while the run is improving hold their fire until the run stops improving', () => {
    const points = indexed(learnerPoints(60, 1, { erraticAt: 20 })).map((p) => ({ ...p, improving: p.at < 40 }));
    assert.deepEqual(kinds(runDetector(new EntropyDetector(), points)), ['entropy_erratic@40']);
  });

  test('the early level is the mean of the first earlyUpdates values', () => {
    const detector = new EntropyDetector(entropyConfig({ earlyUpdates: 3 }));
    for (const [i, entropy] of [2, 1, 3, 0.1].entries()) detector.observe({ at: i, entropy });
    assert.equal(detector.earlyLevel, 2);
  });
});

describe('entropy collapse (where the policy fails)', () => {
  /** Per window: the failed and successful episodes' mean surprisal (nats per token) and token counts, with 5 % noise. */
  function windows(n: number, seed: number, failed: (v: number) => number, succeeded: (v: number) => number, tokens = 64) {
    const noise = gaussian(seed);
    return Array.from({ length: n }, (_, v) => ({
      at: v,
      failed: { sum: tokens * failed(v) * (1 + 0.05 * noise()), tokens },
      succeeded: { sum: tokens * succeeded(v) * (1 + 0.05 * noise()), tokens },
    }));
  }
  const uniform = Math.log(4);

  test("failed episodes' actions turning certain at window 20 fire at 21 (recent 2 windows), once, for every seed", () => {
    for (const seed of SEEDS) {
      const points = windows(
        60,
        seed,
        (v) => (v >= 20 ? 0.05 : uniform),
        () => uniform,
      );
      assert.deepEqual(kinds(runDetector(new EntropyCollapseDetector(), points)), ['entropy_collapse@21'], `seed ${seed}`);
    }
  });

  test('sharpening on the successes while the failures stay unsure (a bandit finding its arm) raises nothing', () => {
    for (const seed of SEEDS) {
      const points = windows(
        60,
        seed,
        (v) => uniform * (1 + v / 20),
        (v) => uniform * Math.exp(-v / 4),
      );
      assert.deepEqual(runDetector(new EntropyCollapseDetector(), points), [], `seed ${seed}`);
    }
  });

  test('a healthy run whose entropy halves everywhere (10 seeds × 200 windows) raises nothing', () => {
    for (const seed of SEEDS) {
      const points = windows(
        200,
        seed,
        (v) => uniform * (1 - v / 400),
        (v) => uniform * (1 - v / 400),
      );
      assert.deepEqual(runDetector(new EntropyCollapseDetector(), points), [], `seed ${seed}`);
    }
  });

  test('a window with fewer than minTokens failed tokens is not scored', () => {
    const certain = windows(
      10,
      1,
      (v) => (v >= 5 ? 0.01 : uniform),
      () => 0.01,
      8,
    );
    assert.deepEqual(runDetector(new EntropyCollapseDetector(), certain), []);
    assert.deepEqual(kinds(runDetector(new EntropyCollapseDetector(entropyCollapseConfig({ minTokens: 8 })), certain)), ['entropy_collapse@6']);
  });
});

describe('gradient-norm spike', () => {
  test('an 8× norm at update 150 fires at 150 exactly, for every seed', () => {
    for (const seed of SEEDS) {
      const alerts = runDetector(new GradNormSpikeDetector(), indexed(learnerPoints(N, seed, { spikeAt: 150 })));
      assert.deepEqual(at(alerts), [150], `seed ${seed}`);
      assert.equal(alerts[0]!.severity, 'warning', 'a spike whose update did not move the policy far');
      assert.ok(alerts[0]!.evidence.z! > 7);
    }
  });

  test("a norm 100× the window's median is a spike even when the norms spread too widely for z > 7", () => {
    // ln-norms spread with a MAD of ≈ 0.6 (norms 0.3–10, as on FrozenLake): ln 100 / (1.48 · 0.6) ≈ 5.2 < 7.
    const spread = [0.3, 1, 3, 10, 2, 0.6, 5, 1.5, 4, 0.8];
    const points = Array.from({ length: 60 }, (_, i) => ({ at: i, gradNorm: spread[i % spread.length]! }));
    const alerts = runDetector(new GradNormSpikeDetector(), [...points, { at: 60, gradNorm: 200 }]);
    assert.deepEqual(at(alerts), [60]);
    assert.ok(alerts[0]!.evidence.z! < 7 && alerts[0]!.evidence.ratioToMedian! > 50);
    assert.deepEqual(runDetector(new GradNormSpikeDetector(gradNormSpikeConfig({ maxRatio: 1000 })), [...points, { at: 60, gradNorm: 200 }]), []);
  });

  test('a spike whose update moved the policy by more than 1 nat of PPO-KL is critical', () => {
    const points = indexed(learnerPoints(N, 1, { spikeAt: 150 })).map((p) => ({ ...p, ppoKl: p.at === 150 ? 1.5 : 0.02 }));
    const [alert] = runDetector(new GradNormSpikeDetector(), points);
    assert.equal(alert?.severity, 'critical');
    assert.equal(alert?.evidence.ppoKl, 1.5);
  });

  test("a z-outlier below the run's early gradient scale is no spike (a converged policy's near-zero gradients)", () => {
    const early = Array.from({ length: 20 }, (_, i) => ({ at: i, gradNorm: 1 + 0.05 * (i % 3) }));
    const converged = Array.from({ length: 40 }, (_, i) => ({ at: 20 + i, gradNorm: 1e-3 * (1 + 0.05 * (i % 3)) }));
    const blip = { at: 60, gradNorm: 0.14 };
    assert.deepEqual(runDetector(new GradNormSpikeDetector(), [...early, ...converged, blip]), []);
    assert.equal(runDetector(new GradNormSpikeDetector(gradNormSpikeConfig({ minEarlyRatio: 0 })), [...early, ...converged, blip]).length, 1);
  });

  test("a norm that jumps with the rewards' scale (rewards × 100 from update 150) is no spike; the same jump at an unchanged reward scale is", () => {
    for (const seed of SEEDS) {
      const scaled = indexed(learnerPoints(N, seed)).map((p) => (p.at >= 150 ? { ...p, gradNorm: p.gradNorm * 100, rewardScale: 60 } : { ...p, rewardScale: 0.6 }));
      assert.deepEqual(runDetector(new GradNormSpikeDetector(), scaled), [], `seed ${seed}`);
      const unscaled = scaled.map((p) => ({ ...p, rewardScale: 0.6 }));
      const alerts = runDetector(new GradNormSpikeDetector(), unscaled);
      assert.deepEqual(at(alerts), [150], `seed ${seed}`);
      assert.equal(alerts[0]!.evidence.rewardScaleRatio, 1);
    }
  });

  test('a smaller reward scale does not hide a spike', () => {
    const points = indexed(learnerPoints(N, 2, { spikeAt: 150 })).map((p) => ({ ...p, rewardScale: p.at >= 150 ? 0.01 : 1 }));
    assert.deepEqual(at(runDetector(new GradNormSpikeDetector(), points)), [150]);
  });

  test('healthy log-normal norms with a drift (10 seeds) raise nothing', () => {
    for (const seed of SEEDS) assert.deepEqual(runDetector(new GradNormSpikeDetector(), indexed(learnerPoints(N, seed))), [], `seed ${seed}`);
  });

  test('nothing during the warm-up, however large', () => {
    const points = Array.from({ length: 30 }, (_, i) => ({ at: i, gradNorm: i === 10 ? 100 : 1 + 0.01 * (i % 3) }));
    assert.deepEqual(runDetector(new GradNormSpikeDetector(), points), []);
  });

  test('linear mode follows z = (x − median) / (1.4826 · MAD)', () => {
    // Previous 20 norms alternate 0.9 and 1.1: median 1.0, MAD 0.1, scale 0.14826; 2.1 gives z ≈ 7.42.
    const points = [...Array.from({ length: 20 }, (_, i) => ({ at: i, gradNorm: i % 2 === 0 ? 0.9 : 1.1 })), { at: 20, gradNorm: 2.1 }];
    const [alert] = runDetector(new GradNormSpikeDetector(gradNormSpikeConfig({ logScale: false, minRelativeScale: 0 })), points);
    assert.ok(alert);
    assert.ok(Math.abs(alert.evidence.z! - 1.1 / 0.14826) < 1e-9);
    assert.ok(Math.abs(alert.threshold - (1 + 7 * 0.14826)) < 1e-9);
  });

  test('one alert per episode: a spike lasting several updates fires once; a new spike after the cooldown fires again', () => {
    const base = learnerPoints(N, 3);
    const points = indexed(base.map((p, i) => ({ gradNorm: (i >= 100 && i < 104) || i === 140 ? p.gradNorm * 10 : p.gradNorm })));
    assert.deepEqual(at(runDetector(new GradNormSpikeDetector(), points)), [100, 140]);
  });
});

describe('policy-shift spike (PPO-KL of one update)', () => {
  // The PPO-KL of each update in `bench collapse` seed 1 (FrozenLake, 8 maps, lr 1e-2; docs/results/collapse.md),
  // iterations 0–39. The default threshold was chosen from these four runs: they are the
  // detector's training data, not an out-of-sample test.
  const grpo = [
    0.039, 0.013, 0.019, 0.029, 0.182, 0.069, 0.017, 0.024, 0.038, 0.024, 0.022, 0.017, 0.032, 0.056, 0.047, 0.038, 0.09, 1.784, 0.371, 0.282, 0.022, 0.006, 0.002, 0.065, 1.69,
    0.001, 0.017, 4.633, 3.535, 1.308, 0.036, 0.117, 0.381, 0.087, 0.195, 0.287, 0.026, 0.058, 0.214, 0.008,
  ];
  const starpoS = [
    0.06, -0.005, 0.084, 0.135, 0.024, 0.098, 0.16, 0.042, 0.045, 0.013, 0.007, 0.014, 0.117, 0.027, 0.036, 0.029, 0.046, 0.031, 0.002, 0.013, 0.036, 0.068, 0.045, 0.026, 0.02,
    0.055, 0.02, 0.031, 0.006, -0.01, 0.027, 0.044, 0.011, 0.011, 0.051, 0.031, -0.002, 0.005, 0.039, 0.075,
  ];
  const grpoStem = [
    0.04, 0.02, 0.008, 0.008, 0.02, 0.079, 0.046, 0.027, 0.103, 0.048, 0.075, 0.049, 0.123, 0.011, 0.017, 0.048, 0.014, 0.091, 0.055, 0.017, 0.009, 0.01, 0.033, 0.028, 0.046, 0,
    0.03, 0.004, 0.008, 0.019, 0.009, 0.011, 0.014, 0.001, 0.023, 0.19, 0.753, 0.456, 0.011, 0.096,
  ];
  const starpoSStem = [
    0.043, 0.019, 0.045, 0.069, 0.01, 0.007, 0.442, 0.082, 0.34, 0.143, 0.097, 0.266, 0.007, 0, 0, 0, 0, 0, 0.34, 2.937, 0, 0, 0, 0, 0, 0, 0, 0, 0.036, 0.14, 0.074, 0.121, -0.001,
    0.018, 0.008, 0.074, 0.099, 0.197, 1.05, 3.18,
  ];
  const run = (kls: readonly number[]) =>
    at(
      runDetector(
        new PolicyShiftDetector(),
        kls.map((ppoKl, i) => ({ at: i, ppoKl })),
      ),
    );

  test('bench collapse, seed 1: fires on the update before each fall, quiet on the runs that held', () => {
    assert.deepEqual(run(grpo), [17]); // success rose to its peak at 21–23 and fell at 28; 24, 27, 28 are the same episode
    assert.deepEqual(run(starpoS), []);
    assert.deepEqual(run(grpoStem), []); // 0.75 at 36 while success climbed to 0.62
    assert.deepEqual(run(starpoSStem), [19, 38]); // success 0.25 → 0.12 at 20
  });

  test('healthy updates (10 seeds, log-normal around 0.03 with rare 0.4) raise nothing; a 2-nat update at 120 fires at 120', () => {
    for (const seed of SEEDS) {
      const noise = gaussian(seed);
      const kls = Array.from({ length: N }, (_, i) => (i % 37 === 5 ? 0.4 : 0.03 * Math.exp(0.8 * noise())));
      assert.deepEqual(run(kls), [], `seed ${seed}`);
      assert.deepEqual(run(kls.map((kl, i) => (i === 120 ? 2 : kl))), [120], `seed ${seed}`);
    }
  });

  test('the alert says by how much, non-finite values are left to the nan detector, and the config is checked', () => {
    const [alert] = runDetector(
      new PolicyShiftDetector(policyShiftConfig({ maxKl: 0.2, clearKl: 0.1 })),
      [0.05, Number.NaN, 0.3].map((ppoKl, i) => ({ at: i, ppoKl })),
    );
    assert.equal(alert?.at, 2);
    assert.equal(alert?.threshold, 0.2);
    assert.match(alert!.message, /moved the policy 0\.3 nats/);
    assert.throws(
      () => policyShiftConfig({ clearKl: 2 }),
      (e: unknown) => e instanceof ConfigError && /clearKl/.test(e.message),
    );
    assert.throws(() => policyShiftConfig({ maxKl: 0 }), ConfigError);
  });
});

describe('response length and invalid actions', () => {
  test('generated tokens per sample falling to a quarter at update 120 fires within 121–122', () => {
    for (const seed of SEEDS) {
      const alerts = runDetector(new ResponseLengthDetector(), indexed(learnerPoints(N, seed, { lengthDropAt: 120 })));
      assert.equal(alerts.length, 1, `seed ${seed}`);
      assert.ok(alerts[0]!.at === 121 || alerts[0]!.at === 122, `seed ${seed}: fired at ${alerts[0]!.at}`);
    }
  });

  test('invalid-action rate rising 0.05 → 0.4 at batch 120 fires at 121', () => {
    for (const seed of SEEDS) {
      assert.deepEqual(at(runDetector(new InvalidActionRiseDetector(), indexed(rolloutBatches(N, seed, { invalidAt: 120 })))), [121], `seed ${seed}`);
    }
  });

  test('healthy lengths and rates (10 seeds) raise nothing', () => {
    for (const seed of SEEDS) {
      assert.deepEqual(runDetector(new ResponseLengthDetector(), indexed(learnerPoints(N, seed))), [], `seed ${seed}`);
      assert.deepEqual(runDetector(new InvalidActionRiseDetector(), indexed(rolloutBatches(N, seed))), [], `seed ${seed}`);
    }
  });

  test('cooldown: a rise that clears and returns within 20 batches of the alert stays silent; one after that fires', () => {
    const rate = (i: number) => ((i >= 40 && i < 50) || (i >= 55 && i < 60) || i >= 120 ? 0.5 : 0.05);
    const points = Array.from({ length: 150 }, (_, i) => ({ at: i, invalidActionRate: rate(i) }));
    assert.deepEqual(at(runDetector(new InvalidActionRiseDetector(), points)), [41, 121]);
  });
});

describe('non-finite metrics', () => {
  test('NaN fires once per episode, critical; a recurrence within the cooldown is silent', () => {
    const bad = new Set([30, 31, 32, 35, 50]);
    const points = Array.from({ length: 60 }, (_, i) => ({ at: i, values: { totalLoss: bad.has(i) ? Number.NaN : 0.1, gradNormPreClip: i === 31 ? Infinity : 1 } }));
    const alerts = runDetector(new NonFiniteDetector(), points);
    assert.deepEqual(at(alerts), [30, 50]);
    assert.equal(alerts[0]!.kind, 'nan');
    assert.equal(alerts[0]!.severity, 'critical');
    assert.ok(Number.isNaN(alerts[0]!.evidence.totalLoss));
  });
});

describe('template collapse and repetition (trajectory windows)', () => {
  test('the MI proxy: state-dependent tokens give I/H(X) ≈ 0.5, a state-independent template ≈ 0', () => {
    const healthy = inputDependence(windowPairs(0, 1));
    const template = inputDependence(windowPairs(0, 1, { template: true }));
    assert.equal(healthy.inputs, 8);
    assert.ok(healthy.dependence > 0.4, `healthy ${healthy.dependence}`);
    assert.ok(Math.abs(template.dependence) < 0.05, `template ${template.dependence}`);
    // The template is as varied as before: token entropy stays high, so entropy alone would not see it.
    assert.ok(template.tokenEntropy > 0.9 * Math.log(60), `token entropy ${template.tokenEntropy}`);
  });

  test('template output from window 10 fires template_collapse at 11 (confirm = 2 windows), for every seed', () => {
    for (const seed of SEEDS) {
      const detector = new TemplateCollapseDetector();
      const alerts = Array.from({ length: 20 }, (_, v) => detector.observe({ at: v, pairs: windowPairs(v, seed, { template: v >= 10 }) })).flat();
      assert.deepEqual(kinds(alerts), ['template_collapse@11'], `seed ${seed}`);
    }
  });

  test('the same three answers for every state from window 12 fires action_repetition at 13', () => {
    for (const seed of SEEDS) {
      const detector = new ActionRepetitionDetector();
      const alerts = Array.from({ length: 20 }, (_, v) => detector.observe({ at: v, pairs: windowPairs(v, seed, { repeat: v >= 12 }) })).flat();
      assert.deepEqual(kinds(alerts), ['action_repetition@13'], `seed ${seed}`);
    }
  });

  test('one answer for every input holds its fire while the windows are solved (success ≥ 0.95), and fires once they are not', () => {
    for (const seed of SEEDS) {
      const template = new TemplateCollapseDetector();
      const repetition = new ActionRepetitionDetector();
      const successRate = (v: number) => (v < 10 ? 0.3 : v < 20 ? 0.97 : 0.5);
      const alerts = Array.from({ length: 26 }, (_, v) => {
        const point = { at: v, successRate: successRate(v) };
        return [
          ...template.observe({ ...point, pairs: windowPairs(v, seed, { template: v >= 10 }) }),
          ...repetition.observe({ ...point, pairs: windowPairs(v, seed, { repeat: v >= 10 }) }),
        ];
      }).flat();
      assert.deepEqual(kinds(alerts), ['template_collapse@21', 'action_repetition@21'], `seed ${seed}`);
    }
  });

  test('healthy windows (10 seeds) raise nothing', () => {
    for (const seed of SEEDS) {
      const template = new TemplateCollapseDetector();
      const repetition = new ActionRepetitionDetector();
      for (let v = 0; v < 30; v++) {
        const point = { at: v, pairs: windowPairs(v, seed) };
        assert.deepEqual([...template.observe(point), ...repetition.observe(point)], [], `seed ${seed} window ${v}`);
      }
    }
  });

  test('cross-input repetition counts a step when its action text appears under another input', () => {
    const pairs = [
      { input: 'a', action: 'x', tokens: [] },
      { input: 'b', action: 'x', tokens: [] },
      { input: 'a', action: 'y', tokens: [] },
      { input: 'a', action: 'y', tokens: [] },
    ];
    assert.deepEqual(crossInputRepetition(pairs), { rate: 0.5, distinctActions: 2 });
  });
});
