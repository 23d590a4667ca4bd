// Held-out evaluation: the policy plays environments reset with evaluation seeds (≥ 1e9, never used in
// training). Greedy success is the headline number; with `samples` > 0 each task is also played that
// many times by sampling, giving τ-bench's pass@k (some trial succeeds) and pass^k (all k succeed).
import type { Environment } from '../../envs/contract.js';
import type { Policy } from '../../envs/policy/policy.js';
import type { HistoryEntry } from '../../envs/policy/policy.js';
import { passAtK, passHatK } from '../../processors/stats/pass-at-k.js';

export interface EvalOptions {
  /** Builds a fresh environment (one per concurrent episode). */
  readonly createEnv: () => Environment;
  readonly seeds: readonly number[];
  readonly greedy: Policy;
  /** Sampling policy for pass@k / pass^k (omit to skip). */
  readonly sampling?: Policy;
  /** Sampled trials per task (n of the unbiased estimators). Default 0. */
  readonly samples?: number;
  readonly ks?: readonly number[];
  /** Called after every finished episode (greedy and sampled), for progress. */
  readonly onEpisode?: () => void;
}

export interface EvalResult {
  readonly tasks: number;
  readonly greedySuccess: number;
  readonly meanReward: number;
  readonly meanSteps: number;
  readonly passAtK: Record<string, number>;
  readonly passHatK: Record<string, number>;
}

interface Outcome {
  readonly success: boolean;
  readonly reward: number;
  readonly steps: number;
}

/** One episode from `seed` (the actors' loop without Kafka; eval seeds are allowed here). */
export async function playEpisode(env: Environment, policy: Policy, seed: number, sampleSeed: number): Promise<Outcome> {
  const reset = env.reset(seed);
  const systemPrompt = env.systemPrompt();
  const history: HistoryEntry[] = [];
  let observation = reset.observation;
  let reward = 0;
  for (let turn = 0; ; turn++) {
    const reply = await policy.act({
      systemPrompt,
      history: [...history],
      observation,
      seed: (sampleSeed * 1000 + turn) >>> 0,
      actionSpace: { validActions: [...env.validActions()], maxActionsPerTurn: env.maxActionsPerTurn },
    });
    const result = env.step(reply.text);
    reward += result.reward;
    history.push({ role: 'observation', text: observation }, { role: 'action', text: reply.text });
    observation = result.observation;
    if (result.terminated || result.truncated) return { success: result.metrics.success === 1, reward, steps: turn + 1 };
  }
}

export async function evaluate(options: EvalOptions): Promise<EvalResult> {
  const { seeds, samples = 0, ks = [1, 4] } = options;
  const counted = (outcome: Outcome) => {
    options.onEpisode?.();
    return outcome;
  };
  const greedy = await Promise.all(seeds.map((seed, i) => playEpisode(options.createEnv(), options.greedy, seed, i).then(counted)));
  const at: Record<string, number> = {};
  const hat: Record<string, number> = {};
  if (options.sampling && samples > 0) {
    const successes = await Promise.all(
      seeds.map(async (seed, task) => {
        const trials = await Promise.all(
          Array.from({ length: samples }, (_, trial) => playEpisode(options.createEnv(), options.sampling!, seed, 1_000_003 * (task + 1) + trial).then(counted)),
        );
        return trials.filter((t) => t.success).length;
      }),
    );
    for (const k of ks.filter((k) => k <= samples)) {
      at[`pass@${k}`] = successes.reduce((sum, c) => sum + passAtK(samples, c, k), 0) / seeds.length;
      hat[`pass^${k}`] = successes.reduce((sum, c) => sum + passHatK(samples, c, k), 0) / seeds.length;
    }
  }
  const n = Math.max(1, greedy.length);
  return {
    tasks: seeds.length,
    greedySuccess: greedy.filter((o) => o.success).length / n,
    meanReward: greedy.reduce((s, o) => s + o.reward, 0) / n,
    meanSteps: greedy.reduce((s, o) => s + o.steps, 0) / n,
    passAtK: at,
    passHatK: hat,
  };
}
