// `trajflow bench learner [--backend auto|wasm|cpu] [--width D] [--layers L] [--tokens T] [--rows B] [--updates N] [--json]`:
// on one TensorFlow.js backend, in one run,
//  - on WASM, each round also times one update on the backend's own BatchMatMul and Identity (learner/kernels
//    switched off), for the speed-up of trajflow's kernels;
//  - matMul: the backend's own plain tf.matMul speed on the model's shapes ([B·T, d]·[d, 3d], [B·T, d]·[d, 4d],
//    [B·T, 4d]·[4d, d]) and on a 512² square — the ceiling;
//  - training: PolicyTrainer.update on synthetic batches of B sequences × T tokens (half of each sequence
//    reply tokens with lossMask 1), as tokens/s and effective FLOP/s (formula at `updateFlops`);
//  - effective / matMul: the share of the backend's matMul speed the learner reaches;
//  - sampling: TransformerPolicy.actBatch on 32 FrozenLake requests, replies/s.
// The matMuls and the updates alternate round by round (--updates N rounds), so the ratio compares the two
// under the same conditions of the machine, however busy it is; each figure is the median over the rounds, after
// warm-up, and the ratio the median of the rounds' ratios. Progress goes to stderr; the table (or, with
// --json, one JSON object) to stdout.
import { cpus } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { formatReply } from '../envs/actions.js';
import { createEnv } from '../envs/registry.js';
import type { HistoryEntry, PolicyRequest } from '../envs/policy/policy.js';
import { parseBackendChoice, selectBackend } from '../learner/backend.js';
import { buildPolicyLossConfig } from '../learner/loss/index.js';
import { MODEL_DEFAULTS, type PolicyModelConfig } from '../learner/model/config.js';
import { createPolicyBundle, disposeBundle, policyOf, type PolicyBundle } from '../learner/policy/bundle.js';
import { contextIds } from '../learner/policy/context.js';
import { buildBatch, type TrainingBatch } from '../learner/train/batch.js';
import { buildOptimizerConfig, type OptimizerConfig } from '../learner/train/config.js';
import { installWasmKernels, useWasmKernels } from '../learner/kernels/wasm-kernels.js';
import { PolicyTrainer } from '../learner/train/trainer.js';
import { Rng } from '../core/rng.js';
import type { TrainingSampleEvent } from '../schemas/index.js';
import { option } from './args.js';
import { interleavedRates, roundRatio, type InterleavedRates, type RoundTimes, type SamplingRate } from './learner-rates.js';
import { learnerFigures, learnerTableLines, type LearnerFigures } from './learner-report.js';
import { median } from './median.js';
import { emitResult } from './results-file.js';

/** One plain tf.matMul of [m, k]·[k, n], its operands kept for the run; `time()` is one timed repetition. */
export class MatMulProbe {
  readonly shape: string;
  readonly flops: number;
  private readonly a: tf.Tensor2D;
  private readonly b: tf.Tensor2D;
  /** Products per repetition: enough for ≥ ~30 ms, so timer resolution and call overhead do not dominate. */
  private readonly inner: number;

  constructor(m: number, k: number, n: number) {
    this.shape = `[${m}×${k}]·[${k}×${n}]`;
    this.flops = 2 * m * k * n;
    this.a = tf.randomNormal([m, k]) as tf.Tensor2D;
    this.b = tf.randomNormal([k, n]) as tf.Tensor2D;
    this.run(3); // warm-up
    this.inner = Math.max(1, Math.ceil(30 / Math.max(0.01, this.run(1))));
  }

  /** ms per product, over one repetition. */
  time(): number {
    return this.run(this.inner) / this.inner;
  }

  dispose(): void {
    tf.dispose([this.a, this.b]);
  }

  private run(count: number): number {
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const product = tf.matMul(this.a, this.b);
      product.dataSync();
      product.dispose();
    }
    return performance.now() - start;
  }
}

/**
 * FLOPs of one update, counting multiply-adds as 2 and only the useful work:
 *   per token, one forward = 2·(P + H) + 4·L·T·d, where P = L·(3d² + d² + 2·d·hidden) are the blocks' weight
 *   matrices (biases and layer norms are O(d) per token and left out), H = d·|reply vocabulary| the head
 *   actually scored, and 4·L·T·d the attention products Q·Kᵀ and A·V over the full T×T (the model
 *   skips up to 3/8 of them by query blocks, and causal attention needs only about half: counting
 *   6·L·T·d instead would lower the figure by ~12% at d 64, T 128);
 *   backward = 2 × forward, so fwd+bwd = 6·(P + H) + 12·L·T·d per token;
 *   every extra forward without gradient (proximal recompute, reference policy) adds one forward.
 * The embedding lookup, the one-hot embedding gradient and the head-column selection are overheads, not counted.
 * tokens = rows × time (every position of the padded batch is computed).
 */
export function updateFlops(config: PolicyModelConfig, replySize: number, rows: number, time: number, extraForwards: number): number {
  const d = config.width;
  const hidden = d * config.mlpRatio;
  const P = config.layers * (3 * d * d + d * d + 2 * d * hidden);
  const H = d * replySize;
  const forwardPerToken = 2 * (P + H) + 4 * config.layers * time * d;
  return rows * time * (3 * forwardPerToken + extraForwards * forwardPerToken);
}

/** B synthetic samples of T + 1 tokens (so the batch is B × T): turns of 8 observation ids, then 8 reply ids in the loss. */
export function syntheticSamples(bundle: PolicyBundle, rows: number, tokens: number, seed = 7): TrainingSampleEvent[] {
  const rng = new Rng(seed);
  const reply = bundle.head.tokenIds;
  const logUniform = -Math.log(reply.length);
  return Array.from({ length: rows }, (_, r) => {
    const tokenIds: number[] = [];
    const lossMask: number[] = [];
    const advantages: number[] = [];
    const behaviourLogProbs: number[] = [];
    const advantage = Math.fround(rng.next() * 2 - 1);
    for (let t = 0; t <= tokens; t++) {
      const inReply = t % 16 >= 8;
      tokenIds.push(inReply ? reply[Math.floor(rng.next() * reply.length)]! : 5 + Math.floor(rng.next() * (bundle.tokenizer.vocabSize - 5)));
      lossMask.push(inReply ? 1 : 0);
      advantages.push(inReply ? advantage : 0);
      behaviourLogProbs.push(inReply ? Math.fround(logUniform) : 0);
    }
    return {
      sampleId: `bench-${r}`,
      runId: 'bench',
      groupId: `bench-g${r >> 3}`,
      episodeId: `bench-e${r}`,
      policyVersion: 0,
      tokenIds,
      lossMask,
      advantages,
      behaviourLogProbs,
      reward: advantage,
      estimator: 'grpo',
      groupSize: 8,
      groupRewardMean: 0,
      groupRewardStd: 1,
      stepAdvantages: null,
      eventTimeMs: 0,
      batch: null,
    };
  });
}

/**
 * Rounds of [one repetition of each matMul probe, then one PolicyTrainer.update], after `warmup` updates:
 * the two sides alternate, so a slower period of the machine slows both (measured one after the other, the
 * ratio followed the matMul reference's own swings: docs/results/learner.md).
 */
export function measureInterleaved(
  bundle: PolicyBundle,
  batch: TrainingBatch,
  /** The ratio's reference: their FLOPs over their summed times. */
  reference: readonly MatMulProbe[],
  options: {
    rounds: number;
    warmup?: number;
    optimizer?: Partial<OptimizerConfig>;
    /** Timed in each round too, outside the ratio. */
    also?: readonly MatMulProbe[];
    /** Also time an update on the backend's own kernels in each round (WASM with learner/kernels installed). */
    compareKernels?: boolean;
  },
): InterleavedRates {
  const probes = [...reference, ...(options.also ?? [])];
  const optimizer = buildOptimizerConfig({ learningRate: 1e-5, ...options.optimizer });
  const trainer = new PolicyTrainer({ ...bundle, optimizer, loss: buildPolicyLossConfig() });
  try {
    for (let i = 0; i < (options.warmup ?? 2); i++) trainer.update(batch);
    const extraForwards = optimizer.proximal === 'recompute' ? 1 : 0;
    const flopsPerUpdate = updateFlops(bundle.model.config, bundle.head.size, batch.rows, batch.time, extraForwards);
    const referenceFlops = reference.reduce((sum, probe) => sum + probe.flops, 0);
    const compareKernels = options.compareKernels === true;
    if (compareKernels) {
      useWasmKernels(false);
      trainer.update(batch); // warm-up of the backend's kernels
      useWasmKernels(true);
    }
    const times: RoundTimes = { probeMs: probes.map(() => []), updateMs: [], roundRatios: [], backendMs: [], speedups: [] };
    const ratio = (updateMs: number, referenceMs: number) => roundRatio(flopsPerUpdate, updateMs, referenceFlops, referenceMs);
    for (let round = 0; round < options.rounds; round++) timeRound({ trainer, batch, probes, references: reference.length, ratio, compareKernels }, times);
    return interleavedRates(probes, batch, flopsPerUpdate, times, compareKernels);
  } finally {
    trainer.dispose();
  }
}

/** One round, appended to `times`: each probe once, one update, and (comparing kernels) one update on the backend's own kernels. */
function timeRound(
  round: {
    readonly trainer: PolicyTrainer;
    readonly batch: TrainingBatch;
    readonly probes: readonly MatMulProbe[];
    /** The first `references` probes are the ratio's reference. */
    readonly references: number;
    readonly ratio: (updateMs: number, referenceMs: number) => number;
    readonly compareKernels: boolean;
  },
  times: RoundTimes,
): void {
  const probeMs = round.probes.map((probe, i) => {
    const ms = probe.time();
    times.probeMs[i]!.push(ms);
    return ms;
  });
  const ms = round.trainer.update(round.batch).durationMs;
  times.updateMs.push(ms);
  times.roundRatios.push(
    round.ratio(
      ms,
      probeMs.slice(0, round.references).reduce((a, b) => a + b, 0),
    ),
  );
  if (!round.compareKernels) return;
  useWasmKernels(false);
  try {
    times.backendMs.push(round.trainer.update(round.batch).durationMs);
  } finally {
    useWasmKernels(true);
  }
  times.speedups.push(times.backendMs.at(-1)! / ms);
}

/** `count` FrozenLake requests with 0–2 earlier turns each (contexts of ~20–80 tokens). */
export function frozenLakeRequests(count: number): PolicyRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const env = createEnv('FrozenLake');
    let observation = env.reset(1000 + i).observation;
    const history: HistoryEntry[] = [];
    for (let turn = 0; turn < i % 3; turn++) {
      const text = formatReply([env.validActions()[turn % env.validActions().length]!]);
      const result = env.step(text);
      history.push({ role: 'observation', text: observation }, { role: 'action', text });
      observation = result.observation;
      if (result.terminated || result.truncated) break;
    }
    return {
      systemPrompt: env.systemPrompt(),
      history,
      observation,
      seed: 17 + i,
      actionSpace: { validActions: [...env.validActions()], maxActionsPerTurn: env.maxActionsPerTurn },
    };
  });
}

export function measureSampling(bundle: PolicyBundle, requests: readonly PolicyRequest[], repetitions = 5): SamplingRate {
  const policy = policyOf(bundle, 0);
  policy.actBatch(requests); // warm-up
  let generated = 0;
  const times = Array.from({ length: repetitions }, () => {
    const start = performance.now();
    const replies = policy.actBatch(requests);
    const ms = performance.now() - start;
    generated = replies.reduce((s, r) => s + r.tokenIds.length, 0);
    return ms;
  });
  const medianMs = median(times);
  const lengths = requests.map((r) => contextIds(bundle.tokenizer, bundle.vocabulary, r.history, r.observation, r.actionSpace?.maxActionsPerTurn ?? 1).context.length);
  return {
    requests: requests.length,
    meanContextTokens: lengths.reduce((a, b) => a + b, 0) / lengths.length,
    medianMs,
    repliesPerSec: requests.length / (medianMs / 1000),
    tokensPerSec: generated / (medianMs / 1000),
  };
}

/** The run's sizes: model width and layers, batch rows × tokens, and interleaved rounds. */
export function learnerSizes(args: readonly string[]) {
  return {
    width: option(args, '--width', MODEL_DEFAULTS.width),
    layers: option(args, '--layers', MODEL_DEFAULTS.layers),
    tokens: option(args, '--tokens', 128),
    rows: option(args, '--rows', 32),
    updates: option(args, '--updates', 7),
  };
}

type LearnerSizes = ReturnType<typeof learnerSizes>;

/** The matMul probes interleaved with the updates, then the sampling, on `bundle`. */
function measureLearner(bundle: PolicyBundle, sizes: LearnerSizes, compareKernels: boolean, backend: string, progress: (line: string) => void): LearnerFigures {
  const { width, layers, tokens, rows, updates } = sizes;
  const c = bundle.model.config;
  const n = rows * tokens;
  progress(`matMul on ${backend}`);
  const shapes: [number, number, number][] = [
    [n, width, 3 * width],
    [n, width, width * c.mlpRatio],
    [n, width * c.mlpRatio, width],
  ];
  const probes = shapes.map(([m, k, o]) => new MatMulProbe(m, k, o));
  const squareProbe = new MatMulProbe(512, 512, 512);
  progress(`training: ${rows} × ${tokens} tokens, width ${width}, ${layers} layers, ${c.heads} heads, ${updates} rounds of [matMul, update]`);
  const batch = buildBatch(syntheticSamples(bundle, rows, tokens), bundle.head, c.contextLength);
  let measured: InterleavedRates;
  try {
    measured = measureInterleaved(bundle, batch, probes, { rounds: updates, also: [squareProbe], compareKernels });
  } finally {
    for (const probe of [...probes, squareProbe]) probe.dispose();
  }
  progress('sampling: 32 FrozenLake requests');
  const sampling = measureSampling(bundle, frozenLakeRequests(32));
  const model = { width, layers, heads: c.heads, mlpRatio: c.mlpRatio, contextLength: c.contextLength, vocabSize: c.vocabSize, replySize: bundle.head.size };
  return learnerFigures(model, measured, probes.length, sampling);
}

export async function runLearnerBench(args: readonly string[]): Promise<number> {
  const json = args.includes('--json');
  const at = args.indexOf('--backend');
  const backend = await selectBackend(parseBackendChoice(at >= 0 ? (args[at + 1] ?? '') : 'auto'));
  const sizes = learnerSizes(args);
  const progress = (line: string) => console.error(`bench: ${line}`);
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version };
  // Side by side with the backend's own kernels when trajflow's are in use (WASM).
  const compareKernels = backend.name === 'wasm' && (await installWasmKernels()).batchMatMul;
  const bundle = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], {
    width: sizes.width,
    layers: sizes.layers,
    contextLength: Math.max(MODEL_DEFAULTS.contextLength, sizes.tokens),
  });
  try {
    const figures = measureLearner(bundle, sizes, compareKernels, backend.description, progress);
    emitResult(args, { bench: 'learner', machine, backend: backend.description, ...figures });
    if (json) return 0;
    for (const line of learnerTableLines(machine, backend.description, figures)) console.log(line);
    return 0;
  } finally {
    disposeBundle(bundle);
  }
}
