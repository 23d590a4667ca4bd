// The untrained baseline the learner must beat: the uniform-random policy (policy/random-policy.ts) played
// over whole episodes, its success rate, return and length per environment. Seeded; never Math.random.
import type { Environment } from './contract.js';
import { createRandomPolicy, type TextPolicy } from './policy/random-policy.js';
import { createEnv, type EnvName, type EnvOptionsByName } from './registry.js';

export interface EpisodeSummary {
  seed: number;
  turns: number;
  totalReward: number;
  success: boolean;
  terminated: boolean;
}

/** Plays one episode from reset(seed) to its end. */
export function playEpisode(env: Environment, policy: TextPolicy, seed: number): EpisodeSummary {
  env.reset(seed);
  let totalReward = 0;
  for (let turns = 1; ; turns++) {
    const result = env.step(policy.act(env));
    totalReward += result.reward;
    if (result.terminated || result.truncated) {
      return { seed, turns, totalReward, success: result.metrics.success === 1, terminated: result.terminated };
    }
  }
}

export interface BaselineResult {
  envName: EnvName;
  episodes: number;
  successRate: number;
  meanReturn: number;
  meanTurns: number;
}

/** Runs the random policy once per seed (the policy is seeded by the episode's seed too). */
export function measureBaseline<N extends EnvName>(envName: N, seeds: readonly number[], options?: Partial<EnvOptionsByName[N]>): BaselineResult {
  const env = createEnv(envName, options);
  let successes = 0;
  let returns = 0;
  let turns = 0;
  for (const seed of seeds) {
    const episode = playEpisode(env, createRandomPolicy(seed), seed);
    successes += episode.success ? 1 : 0;
    returns += episode.totalReward;
    turns += episode.turns;
  }
  const n = Math.max(seeds.length, 1);
  return { envName, episodes: seeds.length, successRate: successes / n, meanReturn: returns / n, meanTurns: turns / n };
}

/** The random policy's success rate on the given seeds. */
export function baselineSuccessRate(envName: EnvName, seeds: readonly number[]): number {
  return measureBaseline(envName, seeds).successRate;
}
