import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TrajflowError } from '../../core/errors.js';
import { EpisodeOverError, InvalidSeedError, ResetNeededError } from '../../envs/errors.js';
import { createEnv, envNames } from '../../envs/registry.js';

describe('episode lifecycle (every environment)', () => {
  for (const name of envNames) {
    test(`${name}: step before reset, step after the end, bad seeds`, () => {
      const env = createEnv(name);
      assert.throws(
        () => env.step('<answer>x</answer>'),
        (e: unknown) => e instanceof ResetNeededError && e instanceof TrajflowError && /reset\(seed\)/.test(e.message),
      );
      for (const seed of [-1, 1.5, Number.NaN, 2 ** 60]) {
        assert.throws(() => env.reset(seed), InvalidSeedError);
      }
      env.reset(3);
      let result;
      // Invalid turns end every episode at the latest after maxTurns turns.
      do result = env.step('not an answer');
      while (!result.terminated && !result.truncated);
      assert.equal(result.truncated, true);
      assert.equal(result.metrics.turn, env.maxTurns);
      assert.equal(result.metrics.success, 0);
      assert.equal(result.info.endReason, 'max-turns');
      assert.throws(
        () => env.step('<answer>x</answer>'),
        (e: unknown) => e instanceof EpisodeOverError && /truncated/.test(e.message),
      );
      // reset starts afresh, also in the middle of an episode.
      env.reset(3);
      env.reset(4);
      assert.doesNotThrow(() => env.step('nothing'));
    });
  }
});
