// The evaluator: a part of a training run that follows its policy versions and plays held-out tasks with them
// (greedy, evaluation seeds from 1e9 on: never trained on), on the run's own environment as its checkpoints
// record it, beside the uniform-random policy on the same tasks; each result is an `evaluation` event on
// <prefix>.evaluations (stored in ClickHouse, drawn on the run page, printed by `trajflow train`). A process
// of its own, so the learner's updates never wait for it.
import { topicName } from '../../core/config.js';
import { followPolicyVersions } from '../../envs/actors/policy-versions.js';
import { EVAL_SEEDS } from '../../envs/seeds.js';
import type { EvaluationEvent, PolicyVersionEvent } from '../../schemas/index.js';
import type { Backbone } from '../../streams/index.js';
import { checkpointPath, readCheckpoint } from '../checkpoint/checkpoint.js';
import { disposeBundle } from '../policy/bundle.js';
import { bundleFromCheckpoint } from '../policy/checkpoint-provider.js';
import { evalEnvironment } from './run-environment.js';
import { evaluateBundle } from './compare.js';
import { isDue, type EvalSchedule } from './schedule.js';

export interface EvaluatorConfig extends EvalSchedule {
  readonly runId: string;
  /** Held-out tasks per evaluation. */
  readonly tasks: number;
  /** Contexts per forward pass. Default 64. */
  readonly maxBatch?: number;
}

export interface EvaluatorRun {
  /** Resolves after the final version was evaluated (or stop()); rejects on a failure. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

export async function startEvaluator(backbone: Backbone, config: EvaluatorConfig, options: { log?: (line: string) => void; onEvaluation?: (event: EvaluationEvent) => void } = {}): Promise<EvaluatorRun> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seeds = EVAL_SEEDS.take(config.tasks);
  let newest = null as PolicyVersionEvent | null;
  let lastEvaluated: number | null = null;
  let running = true;
  let wake: () => void = () => {};
  const follower = await followPolicyVersions(backbone.kafka, backbone.codec, {
    topic: topicName(backbone.config, 'policy.versions'),
    runId: config.runId,
    onVersion: (event) => {
      if (!newest || event.version > newest.version) newest = event;
      wake();
    },
  });

  async function evaluateVersion(version: PolicyVersionEvent): Promise<EvaluationEvent> {
    const started = performance.now();
    const checkpoint = await readCheckpoint(checkpointPath(version.weightsUri), version.checksum);
    const { envName, envOptions } = evalEnvironment(checkpoint.manifest, { envName: undefined, envOptions: undefined, otherEnv: false });
    const bundle = bundleFromCheckpoint(checkpoint);
    try {
      const { policy, random } = await evaluateBundle(bundle, version.version, { envName, envOptions, seeds, samples: 0, ks: [], ...(config.maxBatch === undefined ? {} : { maxBatch: config.maxBatch }) });
      return {
        runId: config.runId,
        policyVersion: version.version,
        trainedIteration: version.metrics.iteration ?? -1,
        envSteps: version.metrics.envSteps ?? -1,
        envName,
        envOptions: JSON.stringify(envOptions),
        tasks: policy.tasks,
        greedySuccess: policy.greedySuccess,
        meanReward: policy.meanReward,
        meanSteps: policy.meanSteps,
        randomSuccess: random.success,
        durationMs: performance.now() - started,
        eventTimeMs: Date.now(),
      };
    } finally {
      disposeBundle(bundle);
    }
  }

  const done = (async () => {
    try {
      // The versions already on the topic first (a restarted run's): evaluate its newest, not version 0 on the way.
      await Promise.race([follower.caughtUp, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
      while (running) {
        const candidate: PolicyVersionEvent | null = newest;
        if (!candidate || !isDue(candidate.version, lastEvaluated, config)) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 1000);
          });
          continue;
        }
        const event = await evaluateVersion(candidate);
        await backbone.producer.send(topicName(backbone.config, 'evaluations'), 'evaluation', event, config.runId);
        lastEvaluated = candidate.version;
        const steps = event.envSteps >= 0 ? `, ${event.envSteps} env steps` : '';
        log(`evaluator: v${event.policyVersion} held-out ${event.greedySuccess.toFixed(3)} (random ${event.randomSuccess.toFixed(3)}, ${event.tasks} tasks${steps}, ${(event.durationMs / 1000).toFixed(1)} s)`);
        options.onEvaluation?.(event);
        if (candidate.version === config.finalVersion) break;
      }
    } finally {
      await follower.close();
    }
  })();
  done.catch(() => undefined);
  return {
    done,
    async stop() {
      running = false;
      wake();
      await done.catch(() => undefined);
    },
  };
}
