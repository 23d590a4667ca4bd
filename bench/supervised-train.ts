// The supervised diagnosis of `trajflow bench supervised`: the policy model trained with cross-entropy on
// BFS-optimal actions of random states of random training tasks, with held-out greedy success and one-step
// accuracy along the way. It answers "can this model represent the task at all, and from how many examples?",
// apart from any RL estimator (docs/results/learning.md).
import * as tf from '@tensorflow/tfjs-core';
import { EVAL_SEEDS, TRAIN_SEEDS } from '../envs/seeds.js';
import type { Rng } from '../core/rng.js';
import { evaluate } from '../learner/eval/evaluate.js';
import type { PolicyModelConfig } from '../learner/model/config.js';
import { createPolicyBundle, disposeBundle, policyOf, type PolicyBundle } from '../learner/policy/bundle.js';
import { turnPromptIds } from '../learner/policy/context.js';
import type { LabelledState, SupervisedTask } from './supervised-states.js';

/** Held-out states for the one-step accuracy come from tasks EVAL_SEEDS.first + this + i: held out, and apart from the greedy episodes' tasks. */
const HELD_OUT_STATE_OFFSET = 500_000_000;

/**
 * The states as the policy sees a turn with attentionSpan 'turn': [OBS, observation…, ACT] (the sampler starts
 * the current turn at its OBS), one row per state.
 */
function encodeStates(bundle: PolicyBundle, states: readonly LabelledState[]): tf.Tensor2D {
  const rows = states.map((s) => turnPromptIds(bundle.tokenizer, s.observation, false));
  const time = rows[0]!.length;
  // The grid puzzles render fixed-size grids, so every row has the same length; padding would need a mask.
  if (rows.some((r) => r.length !== time)) throw new Error('bench supervised: observations of different token lengths in one batch');
  return tf.tensor2d(rows.flat(), [states.length, time], 'int32');
}

/** The target of each state: its optimal actions share probability 1 over the reply head (index 0 is EOS, then the action words). */
function encodeTargets(bundle: PolicyBundle, states: readonly LabelledState[]): tf.Tensor2D {
  const size = bundle.head.size;
  const targets = new Float32Array(states.length * size);
  states.forEach((s, i) => {
    for (const a of s.optimal) targets[i * size + a + 1] = 1 / s.optimal.length;
  });
  return tf.tensor2d(targets, [states.length, size]);
}

/** The reply head's logits at each row's ACT (its last position), [batch, head]. */
function actLogits(bundle: PolicyBundle, ids: tf.Tensor2D): tf.Tensor2D {
  const [batch, time] = ids.shape;
  const logits = bundle.model.logits(ids, bundle.head);
  return tf.reshape(tf.slice(logits, [0, time - 1, 0], [batch, 1, bundle.head.size]), [batch, bundle.head.size]);
}

/** Share of rows whose argmax (a reply-head index, 0 = EOS) is one of the state's optimal actions. */
function shareOptimal(predicted: ArrayLike<number>, states: readonly LabelledState[]): number {
  return states.filter((s, i) => s.optimal.includes(predicted[i]! - 1)).length / states.length;
}

export interface StepResult {
  /** Cross-entropy of the batch before the update. */
  readonly loss: number;
  /** Share of the batch whose argmax before the update was optimal. */
  readonly accuracy: number;
}

/** One Adam step on the batch's cross-entropy against the optimal actions. */
export function crossEntropyStep(bundle: PolicyBundle, optimizer: tf.Optimizer, states: readonly LabelledState[]): StepResult {
  const ids = encodeStates(bundle, states);
  const targets = encodeTargets(bundle, states);
  let predicted: tf.Tensor | undefined;
  try {
    const cost = optimizer.minimize(() => {
      const last = actLogits(bundle, ids);
      predicted = tf.keep(tf.argMax(last, -1));
      return tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(last), targets), -1))) as tf.Scalar;
    }, true)!;
    const loss = cost.dataSync()[0]!;
    cost.dispose();
    return { loss, accuracy: shareOptimal(predicted!.dataSync(), states) };
  } finally {
    predicted?.dispose();
    ids.dispose();
    targets.dispose();
  }
}

/** Share of states whose greedy first reply token is an optimal action. */
export function oneStepAccuracy(bundle: PolicyBundle, states: readonly LabelledState[]): number {
  const ids = encodeStates(bundle, states);
  try {
    const predicted = tf.tidy(() => tf.argMax(actLogits(bundle, ids), -1).dataSync());
    return shareOptimal(predicted, states);
  } finally {
    ids.dispose();
  }
}

/** The policy's distribution over the reply head at each state's ACT (index 0 is EOS, then the action words). */
export function replyProbabilities(bundle: PolicyBundle, states: readonly LabelledState[]): number[][] {
  const ids = encodeStates(bundle, states);
  try {
    const flat = tf.tidy(() => tf.softmax(actLogits(bundle, ids)).dataSync());
    const size = bundle.head.size;
    return states.map((_, i) => Array.from(flat.subarray(i * size, (i + 1) * size)));
  } finally {
    ids.dispose();
  }
}

export interface SupervisedOptions {
  readonly task: SupervisedTask;
  readonly model: Partial<Omit<PolicyModelConfig, 'vocabSize'>>;
  /** Training examples in all (the run stops at the first batch that reaches it). */
  readonly examples: number;
  /** Evaluate at the start, after the first batch past every multiple of this, and at the end. */
  readonly evalEvery: number;
  readonly batch: number;
  readonly learningRate: number;
  /** Held-out tasks played greedily per evaluation. */
  readonly evalTasks: number;
  /** Held-out states for the one-step accuracy per evaluation. */
  readonly evalStates: number;
  /**
   * Which state of each task is drawn. One stream for the training states and the held-out ones, in the order
   * the runs of docs/results/learning.md drew them (held-out states at every evaluation, then the next batches), so the defaults
   * replay those runs; it also means --eval-every changes which training states are drawn.
   */
  readonly states: Rng;
}

export interface SupervisedPoint {
  readonly examples: number;
  readonly seconds: number;
  /** Held-out greedy success over evalTasks episodes. */
  readonly greedySuccess: number;
  /** Held-out one-step accuracy over evalStates states. */
  readonly stepAccuracy: number;
  /** Mean cross-entropy and accuracy of the batches since the previous evaluation (absent at the start). */
  readonly trainLoss?: number;
  readonly trainAccuracy?: number;
}

export interface SupervisedResult {
  /** Share of the held-out tasks that optimal (BFS) play solves within the action budget: the ceiling. */
  readonly optimalSuccess: number;
  readonly actionBudget: number;
  readonly curve: SupervisedPoint[];
  readonly seconds: number;
}

export async function trainSupervised(options: SupervisedOptions, onPoint: (point: SupervisedPoint) => void = () => {}): Promise<SupervisedResult> {
  const { task, batch, evalEvery, states } = options;
  const evalSeeds = EVAL_SEEDS.take(options.evalTasks);
  const optimalSuccess = evalSeeds.filter((seed) => task.startDistance(seed) <= task.actionBudget).length / evalSeeds.length;
  const bundle = createPolicyBundle(task.actionWords, options.model);
  const optimizer = tf.train.adam(options.learningRate);
  const greedy = policyOf(bundle, 0, { greedy: true });
  const started = Date.now();
  const curve: SupervisedPoint[] = [];
  let since: StepResult[] = [];
  let seen = 0;
  const evaluateNow = async () => {
    const episodes = await evaluate({ createEnv: () => task.createEnv(), seeds: evalSeeds, greedy });
    const heldOut = Array.from({ length: options.evalStates }, (_, i) => task.draw(EVAL_SEEDS.first + HELD_OUT_STATE_OFFSET + i, states));
    const mean = (pick: (s: StepResult) => number) => since.reduce((sum, s) => sum + pick(s), 0) / since.length;
    const point: SupervisedPoint = {
      examples: seen,
      seconds: (Date.now() - started) / 1000,
      greedySuccess: episodes.greedySuccess,
      stepAccuracy: oneStepAccuracy(bundle, heldOut),
      ...(since.length > 0 ? { trainLoss: mean((s) => s.loss), trainAccuracy: mean((s) => s.accuracy) } : {}),
    };
    since = [];
    curve.push(point);
    onPoint(point);
  };
  try {
    await evaluateNow();
    // Training tasks 1, 2, 3, … (TRAIN_SEEDS), a new task for every example.
    let nextSeed = TRAIN_SEEDS.first + 1;
    while (seen < options.examples) {
      const examples = Array.from({ length: batch }, () => task.draw(nextSeed++, states));
      since.push(crossEntropyStep(bundle, optimizer, examples));
      seen += batch;
      if (Math.floor(seen / evalEvery) > Math.floor((seen - batch) / evalEvery) || seen >= options.examples) await evaluateNow();
    }
    return { optimalSuccess, actionBudget: task.actionBudget, curve, seconds: (Date.now() - started) / 1000 };
  } finally {
    optimizer.dispose();
    disposeBundle(bundle);
  }
}
