// Unit: the reward-success gap (detectors/reward-success-gap.ts) fires when failed episodes start to earn about
// as much as successful ones, stays quiet on rewards that keep paying for success however noisy, and the
// trajectory windows carry each finished episode's outcome to the window of its newest step.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ActionWindows, actionWindowsConfig } from '../../detectors/action-windows.js';
import { ConfigError } from '../../core/errors.js';
import { REWARD_SUCCESS_GAP, RewardSuccessGapDetector, rewardSuccessGapConfig, type EpisodeOutcome } from '../../detectors/reward-success-gap.js';
import { rng } from '../../bench/load/events.js';
import { SEEDS, gaussian, trajectoriesOfVersion } from './synthetic.js';

/** One window of `n` episodes: each succeeds with `successRate`; `reward(success)` draws its total reward. */
function windowOutcomes(n: number, successRate: number, uniform: () => number, reward: (success: boolean) => number): EpisodeOutcome[] {
  return Array.from({ length: n }, () => {
    const success = uniform() < successRate;
    return { success, reward: reward(success) };
  });
}

function alertsOver(windows: readonly (readonly EpisodeOutcome[])[]) {
  const detector = new RewardSuccessGapDetector();
  return windows.flatMap((outcomes, at) => detector.observe({ at, outcomes }));
}

describe('reward-success gap', () => {
  test('a bug that pays 2 for the three in four failed episodes that timed out, from window 20, fires at 20, once, as critical, for every seed', () => {
    for (const seed of SEEDS) {
      const uniform = rng(seed);
      const windows = Array.from({ length: 60 }, (_, w) => windowOutcomes(64, 0.4, uniform, (success) => (success ? 1 : w >= 20 && uniform() < 0.75 ? 2 : 0)));
      const alerts = alertsOver(windows);
      assert.deepEqual(
        alerts.map((a) => `${a.kind}@${a.at}`),
        [`${REWARD_SUCCESS_GAP}@20`],
        `seed ${seed}`,
      );
      assert.equal(alerts[0]!.severity, 'critical');
      assert.ok(alerts[0]!.evidence.failureRewardMean! > 0.5 && alerts[0]!.evidence.early === 1);
    }
  });

  test('a bug that pays 1.2 to two in five failed episodes (more than a success, little on average) fires by the ranks within a window of its start', () => {
    for (const seed of SEEDS) {
      const uniform = rng(seed);
      const windows = Array.from({ length: 60 }, (_, w) => windowOutcomes(64, 0.4, uniform, (success) => (success ? 1 : w >= 20 && uniform() < 0.4 ? 1.2 : 0)));
      const alerts = alertsOver(windows);
      assert.equal(alerts.length, 1, `seed ${seed}`);
      assert.ok(alerts[0]!.at >= 20 && alerts[0]!.at <= 21, `seed ${seed}: at ${alerts[0]!.at}`);
      const e = alerts[0]!.evidence;
      assert.equal(alerts[0]!.value, e.rankOverlap, `fired by the ranks, not by the mean gap (seed ${seed})`);
      assert.match(alerts[0]!.message, /failure–success pairs ranked the failure higher/);
      assert.ok(e.rankOverlap! > 0.25 && e.earlyRankOverlap === 0, `seed ${seed}`);
    }
  });

  test('a reward that keeps paying for success stays quiet: exact 0/1 rewards, and noisy ones (σ 0.3 around 0.6 and 0.4)', () => {
    for (const seed of SEEDS) {
      const uniform = rng(seed);
      const noise = gaussian(seed);
      const binary = Array.from({ length: 200 }, (_, w) => windowOutcomes(64, 0.1 + (0.8 * w) / 200, uniform, (success) => (success ? 1 : 0)));
      assert.deepEqual(alertsOver(binary), [], `binary, seed ${seed}`);
      const noisy = Array.from({ length: 200 }, () => windowOutcomes(32, 0.5, uniform, (success) => (success ? 0.6 : 0.4) + 0.3 * noise()));
      assert.deepEqual(alertsOver(noisy), [], `noisy, seed ${seed}`);
    }
  });

  test('a window needs minEach successes and failures to be scored; a reward that never paid successes more is not watched', () => {
    const detector = new RewardSuccessGapDetector(rewardSuccessGapConfig({ earlyWindows: 1 }));
    const fair = [...Array(8).fill({ success: true, reward: 1 }), ...Array(8).fill({ success: false, reward: 0 })];
    assert.deepEqual(detector.observe({ at: 0, outcomes: fair }), []);
    // 3 failures earning 5: too few failures to score.
    const fewFailures = [...Array(8).fill({ success: true, reward: 1 }), ...Array(3).fill({ success: false, reward: 5 })];
    assert.deepEqual(detector.observe({ at: 1, outcomes: fewFailures }), []);
    assert.equal(detector.observe({ at: 2, outcomes: [...Array(8).fill({ success: true, reward: 1 }), ...Array(4).fill({ success: false, reward: 5 })] }).length, 1);

    const flat = new RewardSuccessGapDetector(rewardSuccessGapConfig({ earlyWindows: 1 }));
    const paysEqually = [...Array(8).fill({ success: true, reward: 1 }), ...Array(8).fill({ success: false, reward: 1 })];
    assert.deepEqual(flat.observe({ at: 0, outcomes: paysEqually }), []);
    assert.deepEqual(flat.observe({ at: 1, outcomes: [...Array(8).fill({ success: true, reward: 0 }), ...Array(8).fill({ success: false, reward: 1 })] }), []);
  });

  test('its config is checked: the spell clears above the share that fires it', () => {
    assert.throws(() => rewardSuccessGapConfig({ keep: 0.8, clearKeep: 0.5 }), ConfigError);
    assert.throws(() => rewardSuccessGapConfig({ minEach: 1 }), ConfigError);
  });

  test("the trajectory windows put an episode's outcome in the window of its newest step, once", () => {
    const windows = new ActionWindows(actionWindowsConfig({ closeLagVersions: 2 }), ['t/0']);
    const stepOf = (version: number) => trajectoriesOfVersion('run', version, 1, { states: 1, perState: 1 })[0]!.steps[0]!;
    // An episode whose first step was sampled by version 0 and its two last by version 1, then one step of version 0.
    const closed = [
      ...windows.add([stepOf(0), stepOf(1), { ...stepOf(1), stepIndex: 1 }], 't/0', { success: true, reward: 3 }),
      ...windows.add([stepOf(0)], 't/0'),
      ...windows.add([stepOf(3)], 't/0'),
      ...windows.flush(),
    ];
    assert.deepEqual(
      closed.map((w) => [w.index, w.pairs.length, w.outcomes.length]),
      [
        [0, 2, 0],
        [1, 2, 1],
        [3, 1, 0],
      ],
    );
    assert.deepEqual(closed[1]!.outcomes, [{ success: true, reward: 3 }]);
  });
});
