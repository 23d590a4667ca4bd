// One fresh environment per episode, with the options of its rollout. Environments are stateful, so
// concurrent episodes never share one. Where an environment can vary its random draws for the same
// seed, rollout r gets its own draws, so the G rollouts of a group differ by more than the policy's
// choices (RAGEN adds a per-instance counter to the seed for the same reason).
import type { Environment } from '../envs/contract.js';
import { createEnv } from '../envs/registry.js';
import type { EnvName } from '../envs/registry.js';

/** What a rollout's environment is built from (the actors' config has these fields). */
export interface RolloutEnvConfig {
  readonly envName: EnvName;
  readonly envOptions: Readonly<Record<string, unknown>>;
}

/** The environment options of rollout `rollout` (Bandit: rewardSeedOffset shifted by it). */
export function rolloutEnvOptions(config: RolloutEnvConfig, rollout: number): Record<string, unknown> {
  if (config.envName === 'Bandit') {
    const base = config.envOptions.rewardSeedOffset;
    // A bad value is passed on unchanged, so Bandit's own check reports it.
    const shifted = base === undefined ? rollout : typeof base === 'number' ? base + rollout : base;
    return { ...config.envOptions, rewardSeedOffset: shifted };
  }
  return { ...config.envOptions };
}

export function createRolloutEnv(config: RolloutEnvConfig, rollout: number): Environment {
  return createEnv(config.envName, rolloutEnvOptions(config, rollout));
}
