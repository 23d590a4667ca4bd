// buildPolicyLossConfig: the documented defaults, overrides, and a ConfigError with the fix for each bad value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { buildPolicyLossConfig, DEFAULT_POLICY_LOSS_CONFIG, policyLoss, type PolicyLossConfig } from '../../../learner/loss/index.js';
import { tf } from './setup.js';

const rejects = (overrides: Record<string, unknown>, message: RegExp) =>
  assert.throws(
    () => buildPolicyLossConfig(overrides as Partial<PolicyLossConfig>),
    (e: unknown) => e instanceof ConfigError && message.test(e.message),
    `${JSON.stringify(overrides)} should fail with ${message}`,
  );

test('defaults: DAPO clip 0.2/0.28, dual clip 3, token-mean, no entropy bonus, no KL (k3 when on)', () => {
  const config = buildPolicyLossConfig();
  assert.deepEqual(
    { ...config },
    {
      clipRatioLow: 0.2,
      clipRatioHigh: 0.28,
      clipRatioC: 3,
      lossAggMode: 'token-mean',
      entropyCoeff: 0,
      entropyTarget: null,
      klCoeff: 0,
      klEstimator: 'k3',
      valueCoeff: 0,
      valueDiscount: 1,
      criticAdvantageCoeff: 0,
      criticLambda: 1,
      centerByAction: false,
      marginalEntropyCoeff: 0,
    },
  );
  assert.ok(Object.isFrozen(config));
  assert.deepEqual({ ...config }, { ...DEFAULT_POLICY_LOSS_CONFIG });
});

test('overrides replace single fields; undefined keeps the default', () => {
  const config = buildPolicyLossConfig({ clipRatioC: null, lossAggMode: 'seq-mean-token-sum-norm', lossScaleFactor: 4096, klCoeff: 0.001, clipRatioHigh: undefined });
  assert.equal(config.clipRatioC, null);
  assert.equal(config.lossAggMode, 'seq-mean-token-sum-norm');
  assert.equal(config.lossScaleFactor, 4096);
  assert.equal(config.klCoeff, 0.001);
  assert.equal(config.clipRatioHigh, 0.28);
});

test('clipRatioC must be > 1 (or null)', () => {
  rejects({ clipRatioC: 1 }, /policy loss clipRatioC must be a number > 1 .*; got 1\. Use e\.g\. 3 \(the default\), or null to turn dual clip off\./);
  rejects({ clipRatioC: 0.5 }, /clipRatioC must be a number > 1/);
  rejects({ clipRatioC: Number.NaN }, /clipRatioC must be a number > 1/);
  rejects({ clipRatioC: '3' }, /clipRatioC must be a number > 1 .*; got '3'/);
});

test('clip ratios must not be negative; clipRatioLow must stay below 1', () => {
  rejects({ clipRatioLow: -0.1 }, /policy loss clipRatioLow must be a number in \[0, 1\) .*; got -0\.1\. Set it to such a number or leave it unset \(default 0\.2\)\./);
  rejects({ clipRatioLow: 1 }, /clipRatioLow must be a number in \[0, 1\)/);
  rejects({ clipRatioHigh: -0.28 }, /policy loss clipRatioHigh must be a number ≥ 0; got -0\.28\. Set it to such a number or leave it unset \(default 0\.28\)\./);
  rejects({ clipRatioHigh: Number.POSITIVE_INFINITY }, /clipRatioHigh must be a number ≥ 0/);
});

test('an unknown aggregation mode lists the valid ones', () => {
  rejects(
    { lossAggMode: 'token-sum' },
    /policy loss lossAggMode must be one of 'token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'; got 'token-sum'\./,
  );
});

test("KL estimator: verl's long names get pointed at the short one", () => {
  rejects(
    { klEstimator: 'low_var_kl' },
    /klEstimator must be one of 'k1', 'abs', 'k2', 'k3', 'k1\+', 'k3\+'; got 'low_var_kl' \('low_var_kl' is verl's name for 'k3': use 'k3'\)\./,
  );
  rejects({ klEstimator: 'mse' }, /use 'k2'/);
  rejects({ klEstimator: 'k4' }, /klEstimator must be one of .*; got 'k4'\.$/);
});

test('coefficients, lossScaleFactor and unknown options', () => {
  rejects({ entropyCoeff: -0.001 }, /entropyCoeff must be a number ≥ 0; got -0\.001/);
  rejects({ marginalEntropyCoeff: -1 }, /marginalEntropyCoeff must be a number ≥ 0 \(0 = no bonus on the average distribution\); got -1/);
  rejects({ entropyTarget: 0 }, /entropyTarget must be a number of nats > 0, or null for an uncapped bonus; got 0/);
  rejects({ klCoeff: Number.NaN }, /klCoeff must be a number ≥ 0 \(0 = no KL loss\); got NaN/);
  rejects(
    { lossScaleFactor: 0 },
    /lossScaleFactor must be a number > 0 \(e\.g\. the max response length\); got 0\. Set it to such a number or leave it unset \(default T of the batch\)\./,
  );
  rejects(
    { clipRatio: 0.2 },
    /unknown policy loss option 'clipRatio': the options are clipRatioLow, clipRatioHigh, clipRatioC, lossAggMode, lossScaleFactor, entropyCoeff, entropyTarget, klCoeff, klEstimator, valueCoeff, valueDiscount, criticAdvantageCoeff, criticLambda, centerByAction, marginalEntropyCoeff\./,
  );
});

test('policyLoss checks a config that did not come from the builder', () => {
  const inputs = { logp: tf.zeros([1, 2]), oldLogp: tf.zeros([1, 2]), advantages: tf.zeros([1, 2]), mask: tf.ones([1, 2]) };
  assert.throws(() => policyLoss(inputs, { ...DEFAULT_POLICY_LOSS_CONFIG, clipRatioC: 0.5 }), ConfigError);
  tf.dispose(Object.values(inputs));
});
