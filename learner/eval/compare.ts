// The comparison every evaluation makes: a policy bundle on held-out tasks (greedy, and sampled for pass@k)
// beside the uniform-random policy on the same tasks. `trajflow eval` and the evaluator part both use it.
import { UniformRandomPolicy } from '../../envs/policy/random-policy.js';
import { measureBaseline } from '../../envs/baseline.js';
import { createEnv, type EnvName } from '../../envs/registry.js';
import { policyOf, type PolicyBundle } from '../policy/bundle.js';
import { evaluate, type EvalResult } from './evaluate.js';

export interface BaselineColumn {
  /** One episode per task (the random policy has no greedy mode). */
  readonly success: number;
  readonly meanReward: number;
  readonly meanSteps: number;
  readonly passAtK: Record<string, number>;
  readonly passHatK: Record<string, number>;
}

export interface EvalComparison {
  readonly policy: EvalResult;
  readonly random: BaselineColumn;
}

export interface EvalConfig {
  readonly envName: EnvName;
  readonly envOptions?: Record<string, unknown>;
  readonly seeds: readonly number[];
  readonly samples: number;
  readonly ks: readonly number[];
  readonly temperature?: number;
  readonly maxBatch?: number;
  readonly onEpisode?: () => void;
}

/** The bundle's policy (greedy, and sampled at the temperature) and the uniform-random policy on the same seeds. */
export async function evaluateBundle(bundle: PolicyBundle, version: number, s: EvalConfig): Promise<EvalComparison> {
  const maxBatch = s.maxBatch ?? 64;
  const createEnvNow = () => createEnv(s.envName, s.envOptions ?? {});
  const policy = await evaluate({
    createEnv: createEnvNow,
    seeds: s.seeds,
    greedy: policyOf(bundle, version, { greedy: true, maxBatch }),
    sampling: policyOf(bundle, version, { temperature: s.temperature ?? 1, maxBatch }),
    samples: s.samples,
    ks: s.ks,
    ...(s.onEpisode ? { onEpisode: s.onEpisode } : {}),
  });
  const baseline = measureBaseline(s.envName, s.seeds, s.envOptions as never);
  const randomTrials =
    s.samples > 0
      ? await evaluate({ createEnv: createEnvNow, seeds: s.seeds, greedy: new UniformRandomPolicy(), sampling: new UniformRandomPolicy(), samples: s.samples, ks: s.ks })
      : undefined;
  return {
    policy,
    random: {
      success: baseline.successRate,
      meanReward: baseline.meanReturn,
      meanSteps: baseline.meanTurns,
      passAtK: randomTrials?.passAtK ?? {},
      passHatK: randomTrials?.passHatK ?? {},
    },
  };
}
