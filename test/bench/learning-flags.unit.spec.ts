// Unit: `bench learning`'s flags (bench/learning-flags.ts) — the defaults from the env's preset, the overrides, and
// a ConfigError naming what to pass for an unknown env, algorithm or flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { learningBenchConfig } from '../../bench/learning-flags.js';
import { ConfigError } from '../../core/errors.js';
import { TRAIN_PRESETS } from '../../cli/train/presets.js';

test('no flags: FrozenLake, the three algorithms over seeds 1–3, 30,000 env steps, the preset groups and optimizer', () => {
  const s = learningBenchConfig(['learning']);
  const preset = TRAIN_PRESETS.FrozenLake!;
  assert.equal(s.env, 'FrozenLake');
  assert.deepEqual(s.algorithms, ['grpo', 'gigpo', 'starpo-s']);
  assert.deepEqual(s.seeds, [1, 2, 3]);
  assert.equal(s.envSteps, 30_000);
  assert.equal(s.groups, preset.groups);
  assert.equal(s.groupSize, preset.groupSize);
  assert.equal(s.evalTasks, 100);
  assert.equal(s.evalEvery, 10);
  assert.equal(s.evalSamples, 0);
  assert.equal(s.diagnose, false);
  assert.deepEqual(s.envOptions, preset.envOptions);
  assert.equal(s.optimizer.learningRate, preset.learningRate);
  assert.equal(s.optimizer.epochs, preset.optimizer?.epochs);
});

test('flags override: env, algorithms, seeds, budget, evaluation, env options; --json, --save and --diagnose are switches', () => {
  const s = learningBenchConfig([
    'learning',
    '--env',
    'Bandit',
    '--algorithms',
    'gigpo',
    '--seeds',
    '4,5',
    '--env-steps',
    '2000',
    '--eval-samples',
    '3',
    '--lr',
    '0.01',
    '--env-options',
    '{"arms":3}',
    '--json',
    '--save',
    '--diagnose',
  ]);
  assert.equal(s.env, 'Bandit');
  assert.deepEqual(s.algorithms, ['gigpo']);
  assert.deepEqual(s.seeds, [4, 5]);
  assert.equal(s.envSteps, 2000);
  assert.equal(s.evalSamples, 3);
  assert.equal(s.optimizer.learningRate, 0.01);
  assert.deepEqual(s.envOptions, { arms: 3 });
  assert.equal(s.diagnose, true);
});

test('an unknown env, algorithm or flag is a ConfigError that names the choices', () => {
  assert.throws(
    () => learningBenchConfig(['learning', '--env', 'Chess']),
    (e: unknown) => e instanceof ConfigError && /choose one of FrozenLake/.test(e.message),
  );
  assert.throws(
    () => learningBenchConfig(['learning', '--algorithms', 'ppo']),
    (e: unknown) => e instanceof ConfigError && /unknown 'ppo'; use grpo, dr-grpo/.test(e.message),
  );
  assert.throws(
    () => learningBenchConfig(['learning', '--colour', 'red']),
    (e: unknown) => e instanceof ConfigError && /unknown option '--colour'/.test(e.message),
  );
  assert.throws(() => learningBenchConfig(['learning', '--seeds', '1,x']), ConfigError);
});
