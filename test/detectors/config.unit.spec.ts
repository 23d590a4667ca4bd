// The detectors' config builder: defaults, and messages that name the option, the value and the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../core/errors.js';
import { buildDetectorsConfig, readsTrajectories, DEFAULT_ATTRIBUTION_HOLD_MS, WITHOUT_TRAJECTORIES } from '../../detectors/config.js';
import { rewardVarianceCliffDefaults } from '../../detectors/reward-variance-cliff.js';
import { gradNormSpikeDefaults } from '../../detectors/grad-norm-spike.js';
import { AlertLatch } from '../../detectors/alert-latch.js';

function configError(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.code, 'CONFIG');
    return error.message;
  }
  assert.fail('expected a ConfigError');
}

test('defaults: every section filled, overrides merged into their section only', () => {
  const config = buildDetectorsConfig({ gradNormSpike: { k: 9 } });
  assert.deepEqual(config.rewardVarianceCliff, rewardVarianceCliffDefaults);
  assert.deepEqual(config.gradNormSpike, { ...gradNormSpikeDefaults, k: 9 });
  assert.equal(config.attributionHoldMs, DEFAULT_ATTRIBUTION_HOLD_MS);
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.gradNormSpike));
  assert.equal(readsTrajectories(config), true);
  assert.equal(readsTrajectories(buildDetectorsConfig(WITHOUT_TRAJECTORIES)), false);
  // Each trajectory detector alone needs the topic.
  for (const section of Object.keys(WITHOUT_TRAJECTORIES)) {
    assert.equal(readsTrajectories(buildDetectorsConfig({ ...WITHOUT_TRAJECTORIES, [section]: { enabled: true } })), true, section);
  }
});

test('a value out of range names the option, what it means, what was given, what is valid and the default', () => {
  const message = configError(() => buildDetectorsConfig({ rewardVarianceCliff: { stdFraction: 1.5 } }));
  assert.equal(
    message,
    'detectors.rewardVarianceCliff.stdFraction must be a number in (0, 1), got 1.5: it is the share of the baseline in-group std below which the cliff fires. ' +
      'Set it to a number in (0, 1) (default 0.5) or leave it out.',
  );
  assert.match(
    configError(() => buildDetectorsConfig({ entropy: { earlyUpdates: 2.5 } })),
    /detectors\.entropy\.earlyUpdates must be an integer ≥ 1, got 2\.5/,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ gradNormSpike: { k: Number.NaN } })),
    /detectors\.gradNormSpike\.k must be a finite number > 0, got NaN/,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ nonFinite: { cooldown: -1 } })),
    /detectors\.nonFinite\.cooldown must be an integer ≥ 0, got -1.*least distance/,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ rewardVarianceCliff: { solvedSuccessRate: 1.2 } })),
    /solvedSuccessRate must be a number in \(0, 1\], got 1\.2/,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ attributionHoldMs: -5 })),
    /detectors\.attributionHoldMs must be an integer ≥ 0, got -5.*\(default 30000\)/,
  );
});

test('thresholds that would break the hysteresis say which to move', () => {
  assert.equal(
    configError(() => buildDetectorsConfig({ rewardVarianceCliff: { stdFraction: 0.8, clearFraction: 0.6 } })),
    'detectors.rewardVarianceCliff.stdFraction (0.8) must be below detectors.rewardVarianceCliff.clearFraction (0.6): ' +
      'the episode must clear above the level that fires it (hysteresis). Lower stdFraction or raise clearFraction.',
  );
  assert.match(
    configError(() => buildDetectorsConfig({ gradNormSpike: { clearZ: 8 } })),
    /gradNormSpike\.clearZ \(8\) must be below detectors\.gradNormSpike\.k \(7\)/,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ gradNormSpike: { warmup: 60 } })),
    /gradNormSpike\.warmup \(60\) must be at most detectors\.gradNormSpike\.window \(50\)/,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ invalidActions: { clearDelta: 0.3 } })),
    /invalidActions\.clearDelta \(0\.3\) must be below detectors\.invalidActions\.delta \(0\.15\)/,
  );
});

test('unknown sections and options are refused with the list of valid ones (typos do not pass silently)', () => {
  assert.match(
    configError(() => buildDetectorsConfig({ gradNorm: {} } as never)),
    /^detectors\.gradNorm is not a detectors option; the options are rewardVarianceCliff, entropy, entropyCollapse, gradNormSpike, /,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ entropyCollapse: { dropFration: 0.3 } as never })),
    /^detectors\.entropyCollapse\.dropFration is not an option; the options of detectors\.entropyCollapse are enabled, minTokens, earlyWindows, recent, dropFraction, /,
  );
  assert.match(
    configError(() => buildDetectorsConfig({ templateCollapse: { enabled: 'yes' as never } })),
    /templateCollapse\.enabled must be true or false, got yes/,
  );
});

test('AlertLatch: confirm, re-arm after consecutive clear points, cooldown in the points’ units', () => {
  const latch = new AlertLatch({ confirm: 2, rearmAfter: 2, cooldown: 10 });
  const fired: number[] = [];
  const feed = (at: number, state: 'breach' | 'clear' | 'neutral') => latch.update(at, state) && fired.push(at);
  feed(0, 'breach'); // 1 of 2
  feed(1, 'neutral'); // resets the run
  feed(2, 'breach');
  feed(3, 'breach'); // fires (confirmed)
  feed(4, 'breach'); // same episode
  feed(5, 'clear');
  feed(6, 'clear'); // two clears, but only 3 past the alert: still active (cooldown 10)
  feed(7, 'breach');
  feed(8, 'breach'); // silent: same episode
  feed(14, 'clear');
  feed(15, 'clear'); // 12 past the alert: re-armed
  feed(16, 'breach');
  feed(17, 'breach'); // fires again
  assert.deepEqual(fired, [3, 17]);
  assert.equal(latch.isActive, true);
});
