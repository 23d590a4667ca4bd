// What `trajflow bench learner` reports (pure): the figures of its JSON object from the interleaved rounds and the
// sampling, and the table it prints without --json.
import { fmt } from './args.js';
import type { InterleavedRates, SamplingRate } from './learner-rates.js';

export interface LearnerModel {
  readonly width: number;
  readonly layers: number;
  readonly heads: number;
  readonly mlpRatio: number;
  readonly contextLength: number;
  readonly vocabSize: number;
  readonly replySize: number;
}

/** The figures: the first `modelProbes` matMul rates are the model's shapes, the next the 512² square. */
export function learnerFigures(model: LearnerModel, measured: InterleavedRates, modelProbes: number, sampling: SamplingRate) {
  const modelShapes = measured.matMul.slice(0, modelProbes);
  const square = measured.matMul[modelProbes]!;
  const training = measured.training;
  // The model-shape reference: all three products' FLOPs over their summed median times.
  const matMulModel = modelShapes.reduce((s, r) => s + r.flops, 0) / (modelShapes.reduce((s, r) => s + r.medianMs, 0) / 1000);
  return {
    model,
    matMul: { modelShapes, square512: square, modelShapesFlopsPerSec: matMulModel },
    training,
    backendKernels: measured.backendKernels,
    // The median of the rounds' ratios (each against the matMuls timed right before its update).
    effectiveOverMatMul: measured.ratio,
    roundRatios: measured.roundRatios,
    effectiveOverSquare512: training.flopsPerSec / square.flopsPerSec,
    sampling,
  };
}

export type LearnerFigures = ReturnType<typeof learnerFigures>;

const gflops = (x: number) => `${(x / 1e9).toFixed(2)} GFLOP/s`;

/** The table: the machine, the model, the matMul rates, the training rate and its ratio to them, the sampling rate. */
export function learnerTableLines(machine: { readonly cpus: number; readonly cpuModel: string; readonly node: string }, backend: string, r: LearnerFigures): string[] {
  const { model, training, sampling } = r;
  const k = r.backendKernels;
  return [
    `machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}; backend ${backend}`,
    `model: width ${model.width}, ${model.layers} layers, ${model.heads} heads, vocab ${model.vocabSize}, reply head ${model.replySize}`,
    'matMul (plain tf.matMul, median):',
    ...[...r.matMul.modelShapes, r.matMul.square512].map((m) => `  ${m.shape.padEnd(24)} ${m.medianMs.toFixed(2).padStart(8)} ms  ${gflops(m.flopsPerSec)}`),
    `  model shapes together                ${gflops(r.matMul.modelShapesFlopsPerSec)}`,
    `training (PolicyTrainer.update, ${training.rows} × ${training.time} tokens, ${training.lossTokens} in the loss):`,
    `  ${training.medianMs.toFixed(0)} ms/update median (${training.updateMs.map((ms) => ms.toFixed(0)).join(', ')})`,
    `  ${fmt(training.tokensPerSec)} tokens/s, ${(training.flopsPerUpdate / 1e9).toFixed(2)} GFLOP/update, effective ${gflops(training.flopsPerSec)}`,
    ...(k
      ? [
          `  on the WASM backend's own BatchMatMul/Identity in the same rounds: ${k.medianMs.toFixed(0)} ms/update median (${k.updateMs.map((ms) => ms.toFixed(0)).join(', ')}); trajflow's kernels ${k.speedup.toFixed(2)}× faster (median of the rounds)`,
        ]
      : []),
    `ratio effective/matMul: ${r.effectiveOverMatMul.toFixed(2)} against the model shapes (median of the rounds: ${r.roundRatios.map((x) => x.toFixed(2)).join(', ')}; target ≥ 0.30), ${r.effectiveOverSquare512.toFixed(2)} against 512²`,
    `sampling (TransformerPolicy.actBatch, ${sampling.requests} FrozenLake requests, ${sampling.meanContextTokens.toFixed(0)} context tokens on average): ${sampling.medianMs.toFixed(0)} ms/batch, ${fmt(sampling.repliesPerSec)} replies/s, ${fmt(sampling.tokensPerSec)} generated tokens/s`,
  ];
}
