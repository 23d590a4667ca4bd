// The environment registry (Gymnasium's registration.py): a name and typed options in, a fresh
// environment out. Options are checked when the environment is built; unknown names and option keys
// are rejected with a message listing what exists.
import { ConfigError } from '../core/errors.js';
import { BanditEnv, type BanditOptions } from './bandit.js';
import type { Environment } from './contract.js';
import { FrozenLakeEnv, type FrozenLakeOptions } from './frozen-lake.js';
import { SokobanEnv, type SokobanOptions } from './sokoban.js';
import { ToolUseEnv, type ToolUseOptions } from './tool-use.js';

export interface EnvOptionsByName {
  Bandit: BanditOptions;
  FrozenLake: FrozenLakeOptions;
  Sokoban: SokobanOptions;
  ToolUse: ToolUseOptions;
}

export type EnvName = keyof EnvOptionsByName;

const FACTORIES: { [N in EnvName]: (options: Partial<EnvOptionsByName[N]>) => Environment } = {
  Bandit: (options) => new BanditEnv(options),
  FrozenLake: (options) => new FrozenLakeEnv(options),
  Sokoban: (options) => new SokobanEnv(options),
  ToolUse: (options) => new ToolUseEnv(options),
};

export const envNames: readonly EnvName[] = Object.freeze(Object.keys(FACTORIES) as EnvName[]);

export function isEnvName(name: string): name is EnvName {
  return (envNames as readonly string[]).includes(name);
}

/** Builds a fresh environment; throws ConfigError for an unknown name or a bad option. */
export function createEnv<N extends EnvName>(name: N, options?: Partial<EnvOptionsByName[N]>): Environment;
export function createEnv(name: string, options?: Record<string, unknown>): Environment;
export function createEnv(name: string, options: Record<string, unknown> = {}): Environment {
  if (!isEnvName(name)) {
    throw new ConfigError(`unknown environment '${name}'; choose one of ${envNames.join(', ')} (names are case-sensitive).`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ConfigError(`${name}: options must be an object of option names to values.`);
  }
  const factory = FACTORIES[name] as (options: Record<string, unknown>) => Environment;
  return factory(options);
}
