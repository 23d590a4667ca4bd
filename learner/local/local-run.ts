// The whole RL loop in one process, without Kafka: roll out P groups × G episodes with the current
// policy, turn them into trajectories and samples with the processors' own pure functions, update the
// policy, repeat; evaluate greedily on held-out seeds every few iterations. The streaming system runs
// the same pieces across processes; this loop is what the learning curves and the algorithm comparison
// are measured with (fully seeded: the same config gives the same curve on the same backend).
import { runEpisode } from '../../envs/actors/episode.js';
import { episodeIdOf, groupIdOf, groupSeedOf } from '../../envs/actors/ids.js';
import { createRolloutEnv } from '../../envs/actors/rollout-env.js';
import { createEnv, type EnvName } from '../../envs/registry.js';
import { EVAL_SEEDS, taskSeedBase } from '../../envs/seeds.js';
import { trajectoryFromSteps } from '../../processors/assembly/open-episode.js';
import { batchProcessor, type BatchOutput, type ProcessingConfig, type RawGroup } from '../../processors/pipeline/process-batch.js';
import type { StepEvent } from '../../schemas/index.js';
import { buildPolicyLossConfig, type PolicyLossConfig } from '../loss/index.js';
import type { PolicyModelConfig } from '../model/config.js';
import { createPolicyBundle, disposeBundle, policyOf } from '../policy/bundle.js';
import { buildBatch } from '../train/batch.js';
import { buildOptimizerConfig, type OptimizerConfig } from '../train/config.js';
import { PolicyTrainer, type UpdateMetrics } from '../train/trainer.js';
import { evaluate, type EvalResult } from '../eval/evaluate.js';
import { templateCollapseBeforeUpdate, type TemplateCollapseMetrics, type TemplateCollapseSettings } from '../collapse/index.js';

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
   * RAGEN-2's cross-scoring on the iteration's samples before every `every`-th update, as the learner does
   * (templateCollapseBeforeUpdate, the learner's schedule and seed rule, on the weights that sampled the batch). Forward passes only: the
   * run's rollouts and updates are the same with or without it. Default: off.
   */
  readonly templateCollapse?: Omit<TemplateCollapseSettings, 'temperature'> & { readonly every: number };
}

export interface CurvePoint {
  readonly iteration: number;
  readonly envSteps: number;
  readonly trainSuccess: number;
  readonly trainReward: number;
  readonly samples: number;
  readonly update?: UpdateMetrics;
  /** Template-collapse metrics measured before this iteration's update (see LocalRunConfig.templateCollapse). */
  readonly template?: TemplateCollapseMetrics;
  readonly eval?: EvalResult;
}

export async function runLocal(config: LocalRunConfig, onPoint: (point: CurvePoint) => void = () => {}): Promise<CurvePoint[]> {
  const probe = createEnv(config.env, config.envOptions ?? {});
  const bundle = createPolicyBundle(probe.actionVocabulary, { seed: config.seed, ...config.model });
  const optimizer = buildOptimizerConfig(config.optimizer);
  const trainer = new PolicyTrainer({ ...bundle, optimizer, loss: buildPolicyLossConfig(config.loss) });
  const process = batchProcessor({ ...config.processing, tokenizer: bundle.tokenizer });
  const evalSeeds = EVAL_SEEDS.take(config.evalTasks);
  const runId = config.runId ?? `local-${config.env}-${config.seed}`;
  const curve: CurvePoint[] = [];
  let envSteps = 0;
  const evalSamples = config.evalSamples ?? 0;
  const evalNow = () =>
    evaluate({
      createEnv: () => createEnv(config.env, config.envOptions ?? {}),
      seeds: evalSeeds,
      greedy: policyOf(bundle, trainer.updates, { greedy: true }),
      ...(evalSamples > 0 ? { sampling: policyOf(bundle, trainer.updates, { temperature: optimizer.temperature }), samples: evalSamples, ks: [1] } : {}),
    });
  try {
    if (config.evalAtStart) {
      const point: CurvePoint = { iteration: -1, envSteps: 0, trainSuccess: 0, trainReward: 0, samples: 0, eval: await evalNow() };
      curve.push(point);
      onPoint(point);
    }
    for (let iteration = 0; iteration < config.iterations && !config.shouldStop?.(); iteration++) {
      const policy = policyOf(bundle, trainer.updates, { temperature: optimizer.temperature });
      const episodes: Promise<{ steps: StepEvent[]; success: boolean; reward: number }>[] = [];
      for (let g = 0; g < config.groups; g++) {
        const groupId = groupIdOf(runId, iteration * config.groups + g);
        // Training tasks: consecutive seeds per iteration, offset by the run seed (all < 1e9).
        const taskIndex = iteration * config.groups + g;
        const groupSeed = groupSeedOf(taskSeedBase(config.seed), config.tasks ? taskIndex % config.tasks : taskIndex);
        for (let rollout = 0; rollout < config.groupSize; rollout++) {
          const steps: StepEvent[] = [];
          const context = { runId, env: probe.id, groupId, episodeId: episodeIdOf(groupId, rollout), groupSize: config.groupSize, groupSeed, rollout, iteration, batchGroups: config.groups };
          episodes.push(
            runEpisode({ context, env: createRolloutEnv({ envName: config.env, envOptions: config.envOptions ?? {} }, rollout), policy, clock: () => 0, publish: async (e) => void steps.push(e) }).then((o) => ({ steps, success: o.success, reward: o.totalReward })),
          );
        }
      }
      const done = await Promise.all(episodes);
      envSteps += done.reduce((s, e) => s + e.steps.length, 0);
      const byGroup = new Map<string, ReturnType<typeof trajectoryFromSteps>['trajectory'][]>();
      for (const episode of done) {
        const { trajectory } = trajectoryFromSteps(episode.steps);
        byGroup.set(trajectory.groupId, [...(byGroup.get(trajectory.groupId) ?? []), trajectory]);
      }
      const rawGroups = [...byGroup].map(([groupId, trajectories]) => ({ groupId, trajectories }));
      const out = process(rawGroups);
      config.onBatch?.(iteration, rawGroups, out);
      const template = config.templateCollapse
        ? templateCollapseBeforeUpdate(bundle.model, bundle.head, out.samples, { modelSeed: bundle.model.config.seed, update: trainer.updates }, { ...config.templateCollapse, temperature: optimizer.temperature })
        : null;
      const update = out.samples.length > 0 ? trainer.update(buildBatch(out.samples, bundle.head, bundle.model.config.contextLength, { turnRows: trainer.turnRows })) : undefined;
      const point: CurvePoint = {
        iteration,
        envSteps,
        trainSuccess: done.filter((e) => e.success).length / done.length,
        trainReward: done.reduce((s, e) => s + e.reward, 0) / done.length,
        samples: out.samples.length,
        update,
        ...(template ? { template } : {}),
        eval: (iteration + 1) % config.evalEvery === 0 || iteration === config.iterations - 1 ? await evalNow() : undefined,
      };
      curve.push(point);
      onPoint(point);
    }
    // Stopped early between evaluations: evaluate where it stopped.
    const last = curve.at(-1);
    if (last && !last.eval) {
      const point: CurvePoint = { ...last, eval: await evalNow() };
      curve[curve.length - 1] = point;
      onPoint(point);
    }
    return curve;
  } finally {
    trainer.dispose();
    disposeBundle(bundle);
  }
}
