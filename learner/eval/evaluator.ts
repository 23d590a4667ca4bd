// The evaluator: a part of a training run that follows its policy versions and plays held-out tasks with them
// (greedy, evaluation seeds from 1e9 on: never trained on), on the run's own environment as its checkpoints
// record it, beside the uniform-random policy on the same tasks; each result is an `evaluation` event on
// <prefix>.evaluations (stored in ClickHouse, drawn on the run page, printed by `trajflow train`). A process
// of its own, so the learner's updates never wait for it.
//
// When it evaluates is next-evaluation.ts's (pure), what it reports evaluation-event.ts's; this file reads the
// versions, the checkpoints and the environment, and publishes.
import { topicName } from '../../core/config.js';
import { followPolicyVersions, type PolicyVersionFollower } from '../../rollout/follow-policy-versions.js';
import { EVAL_SEEDS } from '../../envs/seeds.js';
import type { EvaluationEvent, PolicyVersionEvent } from '../../schemas/index.js';
import type { Backbone } from '../../streams/index.js';
import { versionCheckpoints, type VersionCheckpoints } from '../checkpoint/weights-transport.js';
import { disposeBundle } from '../policy/bundle.js';
import { bundleFromCheckpoint } from '../policy/checkpoint-provider.js';
import { evaluateBundle } from './compare.js';
import { evaluationEvent, evaluationLine } from './evaluation-event.js';
import { NextEvaluation } from './next-evaluation.js';
import { evalEnvironment } from './run-environment.js';
import type { EvalSchedule } from './schedule.js';

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

export interface EvaluatorOptions {
  readonly log?: (line: string) => void;
  readonly onEvaluation?: (event: EvaluationEvent) => void;
}

export async function startEvaluator(backbone: Backbone, config: EvaluatorConfig, options: EvaluatorOptions = {}): Promise<EvaluatorRun> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seeds = EVAL_SEEDS.take(config.tasks);
  const next = new NextEvaluation<PolicyVersionEvent>(config);
  const alarm = wakeableWait(1000);
  const follower = await followPolicyVersions(backbone.kafka, backbone.codec, {
    topic: topicName(backbone.config, 'policy.versions'),
    runId: config.runId,
    onVersion: (event) => {
      next.announced(event);
      alarm.wake();
    },
  });
  // Versions on the weights topic are read from it (the evaluator then needs no disk shared with the learner).
  const checkpoints = versionCheckpoints({ kafka: backbone.kafka, topic: topicName(backbone.config, 'policy.weights'), runId: config.runId });
  let running = true;
  const done = evaluateUntilDone({ backbone, config, seeds, log, onEvaluation: options.onEvaluation, follower, checkpoints, next, wait: alarm.wait, running: () => running });
  done.catch(() => undefined);
  return {
    done,
    async stop() {
      running = false;
      alarm.wake();
      await done.catch(() => undefined);
    },
  };
}

interface EvaluatorLoop {
  readonly backbone: Backbone;
  readonly config: EvaluatorConfig;
  readonly seeds: readonly number[];
  readonly log: (line: string) => void;
  readonly onEvaluation: EvaluatorOptions['onEvaluation'];
  readonly follower: PolicyVersionFollower;
  readonly checkpoints: VersionCheckpoints;
  readonly next: NextEvaluation<PolicyVersionEvent>;
  /** Resolves on the next version announced, on stop, or after a while. */
  readonly wait: () => Promise<void>;
  readonly running: () => boolean;
}

async function evaluateUntilDone(loop: EvaluatorLoop): Promise<void> {
  const { backbone, config, next } = loop;
  try {
    // The versions already on the topic first (a restarted run's): evaluate its newest, not version 0 on the way.
    await Promise.race([loop.follower.caughtUp, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
    while (loop.running()) {
      const candidate = next.due();
      if (!candidate) {
        await loop.wait();
        continue;
      }
      const event = await evaluateVersion(config, candidate, loop.seeds, loop.checkpoints);
      await backbone.producer.send(topicName(backbone.config, 'evaluations'), 'evaluation', event, config.runId);
      const final = next.evaluated(candidate.version);
      loop.log(evaluationLine(event));
      loop.onEvaluation?.(event);
      if (final) break;
    }
  } finally {
    await loop.follower.close();
    await loop.checkpoints.close();
  }
}

/** Plays the held-out tasks with the version's checkpoint, on the run's own environment, beside the random policy. */
async function evaluateVersion(config: EvaluatorConfig, version: PolicyVersionEvent, seeds: readonly number[], checkpoints: VersionCheckpoints): Promise<EvaluationEvent> {
  const started = performance.now();
  const checkpoint = await checkpoints.read(version);
  const env = evalEnvironment(checkpoint.manifest, { envName: undefined, envOptions: undefined, otherEnv: false });
  const bundle = bundleFromCheckpoint(checkpoint);
  try {
    const result = await evaluateBundle(bundle, version.version, { ...env, seeds, samples: 0, ks: [], ...(config.maxBatch === undefined ? {} : { maxBatch: config.maxBatch }) });
    return evaluationEvent(config.runId, version, env, result, performance.now() - started, Date.now());
  } finally {
    disposeBundle(bundle);
  }
}

/** A wait of at most `ms` that wake() ends early. */
function wakeableWait(ms: number): { wait: () => Promise<void>; wake: () => void } {
  let wake: () => void = () => {};
  return {
    wait: () =>
      new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, ms);
      }),
    wake: () => wake(),
  };
}
