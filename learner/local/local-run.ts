// The whole RL loop in one process, without Kafka: roll out P groups × G episodes with the current
// policy, turn them into trajectories and samples with the processors' own pure functions, update the
// policy, repeat; evaluate greedily on held-out seeds every few iterations. The streaming system runs
// the same pieces across processes; this loop is what the learning curves and the algorithm comparison
// are measured with (fully seeded: the same config gives the same curve on the same backend).
//
// Which episodes an iteration plays is rollout-plan.ts's, what the curve records and when it evaluates is
// curve.ts's (both pure); this file plays, processes, trains and evaluates. With maxStaleness K ≥ 1 an
// iteration is played with the weights of K updates before (lagged-weights.ts), as the actors do through Kafka.
import { runEpisode } from '../../rollout/episode.js';
import { createRolloutEnv } from '../../rollout/rollout-env.js';
import { createEnv, type EnvName } from '../../envs/registry.js';
import { EVAL_SEEDS } from '../../envs/seeds.js';
import { batchProcessor, type BatchOutput, type ProcessingConfig, type RawGroup } from '../../processors/pipeline/process-batch.js';
import type { StepEvent } from '../../schemas/index.js';
import { templateCollapseBeforeUpdate, type CrossScoringConfig } from '../collapse/index.js';
import { evaluate, type EvalResult } from '../eval/evaluate.js';
import { buildPolicyLossConfig, type PolicyLossConfig } from '../loss/index.js';
import type { PolicyModelConfig } from '../model/config.js';
import { createPolicyBundle, disposeBundle, policyOf, type PolicyBundle } from '../policy/bundle.js';
import { buildBatch } from '../train/batch.js';
import { buildOptimizerConfig, type OptimizerConfig } from '../train/config.js';
import { PolicyTrainer } from '../train/trainer.js';
import { curvePoint, evaluatesAfter, rawGroupsOf, startPoint, stepsOf, type CurvePoint, type PlayedEpisode } from './curve.js';
import { checkMaxStaleness, LaggedWeights, type SamplingWeights } from './lagged-weights.js';
import { iterationEpisodes, type RolloutPlan } from './rollout-plan.js';

export type { CurvePoint } from './curve.js';

export interface LocalRunConfig {
  readonly env: EnvName;
  readonly envOptions?: Record<string, unknown>;
  readonly iterations: number;
  /** P groups (tasks) per iteration and G rollouts per group. */
  readonly groups: number;
  readonly groupSize: number;
  readonly processing: ProcessingConfig;
  readonly model?: Partial<Omit<PolicyModelConfig, 'vocabSize'>>;
  readonly optimizer?: Partial<OptimizerConfig>;
  readonly loss?: Partial<PolicyLossConfig>;
  /** Seeds the training tasks (group seeds, taskSeedBase) and, through model.seed, the weights. */
  readonly seed: number;
  /** The run id in every event id. Default local-<env>-<seed>. */
  readonly runId?: string;
  readonly evalEvery: number;
  readonly evalTasks: number;
  /**
   * Also play each held-out task this many times by sampling (at the training temperature) for pass@1 — the
   * policy's own success rate, comparable with the random policy's. Default 0 (greedy only).
   */
  readonly evalSamples?: number;
  /** Train on this many distinct tasks, cycling (a diagnostic: can the policy learn a fixed set?); default: a fresh task per group. */
  readonly tasks?: number;
  /** Also evaluate the untrained policy (reported as iteration −1). Default false. */
  readonly evalAtStart?: boolean;
  /** Checked before every iteration: stop early (e.g. once an env-step budget is used). */
  readonly shouldStop?: () => boolean;
  /**
   * Called once per iteration with the rollout batch as the processors saw it (the groups of trajectories
   * and the processing output: samples, kept/dropped groups, batch statistics), before the policy update.
   * For observers that need more than the curve point (e.g. rollout_stats events for the collapse detectors).
   */
  readonly onBatch?: (iteration: number, groups: readonly RawGroup[], output: BatchOutput) => void;
  /**
   * Iteration i is played with the weights after update max(0, i − maxStaleness), as `trajflow train
   * --max-staleness K` samples it (the real path's actors keep the same lag). Default 0: the current weights.
   */
  readonly maxStaleness?: number;
  /** Called after each iteration's update with the policy as it now is (for probes of a diagnosis); forward passes only. */
  readonly onUpdated?: (iteration: number, bundle: PolicyBundle) => void;
  /** Per-parameter gradient norms of every optimizer step (PolicyTrainer's observeGradients). */
  readonly observeGradients?: (norms: ReadonlyMap<string, number>) => void;
  /**
   * RAGEN-2's cross-scoring on the iteration's samples before every `every`-th update, as the learner does
   * (templateCollapseBeforeUpdate, the learner's schedule and seed rule, on the weights about to be updated: at maxStaleness 0 those that sampled the batch). Forward passes only: the
   * run's rollouts and updates are the same with or without it. Default: off.
   */
  readonly templateCollapse?: Omit<CrossScoringConfig, 'temperature'> & { readonly every: number };
  /** A fault staged at an iteration (`bench alerts` makes real collapses with it); none by default. */
  readonly faultAt?: (iteration: number) => IterationFault | undefined;
}

/** What a staged fault changes in one iteration. */
export interface IterationFault {
  /** The update's learning rate times this (a learning-rate spike). */
  readonly learningRateScale?: number;
  /** Every step's reward times this before the processors see it (a reward-scale bug); success is unchanged. */
  readonly rewardScale?: number;
  /** Paid on the last step of every episode cut short by its step limit (a reward bug that pays for lasting, not for the goal: reward hacking); success is unchanged. */
  readonly timeoutReward?: number;
  /** Loss settings over the run's for this iteration's update (e.g. an entropy bonus that blows the entropy up). */
  readonly loss?: Partial<PolicyLossConfig>;
}

export async function runLocal(config: LocalRunConfig, onPoint: (point: CurvePoint) => void = () => {}): Promise<CurvePoint[]> {
  const run = openRun(config);
  const curve: CurvePoint[] = [];
  const emit = (point: CurvePoint) => {
    curve.push(point);
    onPoint(point);
  };
  let envSteps = 0;
  try {
    if (config.evalAtStart) emit(startPoint(await run.evaluate()));
    for (let iteration = 0; iteration < config.iterations && !config.shouldStop?.(); iteration++) {
      const episodes = await playIteration(run, iteration);
      envSteps += stepsOf(episodes);
      emit(await trainIteration(run, iteration, episodes, envSteps));
    }
    // Stopped early between evaluations: evaluate where it stopped.
    const last = curve.at(-1);
    if (last && !last.eval) {
      const point: CurvePoint = { ...last, eval: await run.evaluate() };
      curve[curve.length - 1] = point;
      onPoint(point);
    }
    return curve;
  } finally {
    run.trainer.dispose();
    run.lagged?.dispose();
    disposeBundle(run.bundle);
  }
}

/** One in-process run's pieces: the policy and its trainer, the processors' batch function, the episodes' plan. */
interface LocalRun {
  readonly config: LocalRunConfig;
  readonly bundle: PolicyBundle;
  readonly optimizer: OptimizerConfig;
  readonly trainer: PolicyTrainer;
  readonly process: (groups: readonly RawGroup[]) => BatchOutput;
  readonly plan: RolloutPlan;
  /** The copies of earlier weights iterations are played with (maxStaleness ≥ 1), or null: the current weights. */
  readonly lagged: LaggedWeights | null;
  /** The current policy, greedy (and sampled, with evalSamples) on the held-out tasks. */
  evaluate(): Promise<EvalResult>;
}

function openRun(config: LocalRunConfig): LocalRun {
  const maxStaleness = checkMaxStaleness(config.maxStaleness);
  const probe = createEnv(config.env, config.envOptions ?? {});
  const bundle = createPolicyBundle(probe.actionVocabulary, { seed: config.seed, ...config.model });
  const optimizer = buildOptimizerConfig(config.optimizer);
  const trainer = new PolicyTrainer({
    ...bundle,
    optimizer,
    loss: buildPolicyLossConfig(config.loss),
    ...(config.observeGradients ? { observeGradients: config.observeGradients } : {}),
  });
  const process = batchProcessor({ ...config.processing, tokenizer: bundle.tokenizer });
  const evalSeeds = EVAL_SEEDS.take(config.evalTasks);
  const runId = config.runId ?? `local-${config.env}-${config.seed}`;
  const plan: RolloutPlan = { runId, env: probe.id, groups: config.groups, groupSize: config.groupSize, seed: config.seed, ...(config.tasks ? { tasks: config.tasks } : {}) };
  const evalSamples = config.evalSamples ?? 0;
  const evaluateNow = () =>
    evaluate({
      createEnv: () => createEnv(config.env, config.envOptions ?? {}),
      seeds: evalSeeds,
      greedy: policyOf(bundle, trainer.updates, { greedy: true }),
      ...(evalSamples > 0 ? { sampling: policyOf(bundle, trainer.updates, { temperature: optimizer.temperature }), samples: evalSamples, ks: [1] } : {}),
    });
  const lagged = maxStaleness > 0 ? new LaggedWeights(maxStaleness, probe.actionVocabulary) : null;
  return { config, bundle, optimizer, trainer, process, plan, lagged, evaluate: evaluateNow };
}

/** The weights iteration `iteration` is played with: the current ones, or with maxStaleness K those after update i − K. */
async function samplingWeights(run: LocalRun, iteration: number): Promise<SamplingWeights> {
  return run.lagged ? run.lagged.forIteration(iteration, run.bundle, run.trainer.updates) : { bundle: run.bundle, version: run.trainer.updates };
}

/** The iteration's episodes with its sampling weights, all started at once (the policy batches their turns). */
async function playIteration(run: LocalRun, iteration: number): Promise<PlayedEpisode[]> {
  const { config } = run;
  const weights = await samplingWeights(run, iteration);
  const policy = policyOf(weights.bundle, weights.version, { temperature: run.optimizer.temperature });
  return Promise.all(
    iterationEpisodes(run.plan, iteration).map((context) => {
      const steps: StepEvent[] = [];
      const env = createRolloutEnv({ envName: config.env, envOptions: config.envOptions ?? {} }, context.rollout);
      return runEpisode({ context, env, policy, clock: () => 0, publish: async (e) => void steps.push(e) }).then((o) => ({ steps, success: o.success, reward: o.totalReward }));
    }),
  );
}

/** The iteration's rollout batch through the processors' functions, one update on its samples, its curve point. */
async function trainIteration(run: LocalRun, iteration: number, episodes: readonly PlayedEpisode[], envSteps: number): Promise<CurvePoint> {
  const { config, bundle, trainer } = run;
  const fault = config.faultAt?.(iteration);
  const groups = rawGroupsOf(faultedRewards(episodes, fault));
  const out = run.process(groups);
  config.onBatch?.(iteration, groups, out);
  const template = config.templateCollapse
    ? templateCollapseBeforeUpdate(
        bundle.model,
        bundle.head,
        out.samples,
        { modelSeed: bundle.model.config.seed, update: trainer.updates },
        { ...config.templateCollapse, temperature: run.optimizer.temperature },
      )
    : null;
  if (config.faultAt) trainer.setLoss(buildPolicyLossConfig({ ...config.loss, ...fault?.loss }));
  const batch = () => buildBatch(out.samples, bundle.head, bundle.model.config.contextLength, { turnRows: trainer.turnRows });
  const update = out.samples.length > 0 ? trainer.update(batch(), { learningRateScale: fault?.learningRateScale ?? 1 }) : undefined;
  config.onUpdated?.(iteration, bundle);
  const evaluation = evaluatesAfter(iteration, config) ? await run.evaluate() : undefined;
  return curvePoint({ iteration, envSteps, episodes, samples: out.samples.length, update, template, evaluation });
}

/** The episodes' rewards as a staged reward bug changes them (unchanged without one). */
function faultedRewards(episodes: readonly PlayedEpisode[], fault: IterationFault | undefined): readonly PlayedEpisode[] {
  const scaled = fault?.rewardScale === undefined ? episodes : scaleRewards(episodes, fault.rewardScale);
  return fault?.timeoutReward === undefined ? scaled : payTimeouts(scaled, fault.timeoutReward);
}

/** The episodes with `bonus` added to the last step of each one its step limit cut short. */
function payTimeouts(episodes: readonly PlayedEpisode[], bonus: number): PlayedEpisode[] {
  return episodes.map((e) => {
    const last = e.steps.at(-1);
    if (!last?.truncated || last.terminated) return e;
    return { ...e, steps: [...e.steps.slice(0, -1), { ...last, reward: last.reward + bonus }] };
  });
}

/** The episodes with every step's reward times `scale`. */
function scaleRewards(episodes: readonly PlayedEpisode[], scale: number): PlayedEpisode[] {
  return episodes.map((e) => ({ ...e, steps: e.steps.map((step) => ({ ...step, reward: step.reward * scale })) }));
}
