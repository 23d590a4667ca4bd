// The environment a run is evaluated on: the one its checkpoints record (what the learner was told; `trajflow
// train` tells it the actors'), or one asked for explicitly.
import { ConfigError } from '../../core/errors.js';
import { canonicalJson } from '../../envs/openenv/mapping.js';
import { isEnvName, type EnvName } from '../../envs/registry.js';
import type { CheckpointManifest } from '../checkpoint/checkpoint.js';

/** What was asked for: undefined fields mean "the run's own"; otherEnv allows a different task. */
export interface EnvRequest {
  readonly envName: EnvName | undefined;
  readonly envOptions: Record<string, unknown> | undefined;
  readonly otherEnv: boolean;
}

/**
 * The environment to evaluate on: the run's (recorded in its checkpoint), or the one asked for — refused where it
 * differs from the run's unless `otherEnv` (a number for another task is not the run's number).
 */
export function evalEnvironment(manifest: Pick<CheckpointManifest, 'runId' | 'env'>, args: EnvRequest): { envName: EnvName; envOptions: Record<string, unknown> } {
  const recorded = manifest.env;
  if (!recorded || !isEnvName(recorded.name)) {
    if (args.envName === undefined)
      throw new ConfigError(
        `the checkpoint of run ${manifest.runId} does not record its environment (written before runs recorded it); pass --env and --env-options as the run was trained`,
      );
    return { envName: args.envName, envOptions: args.envOptions ?? {} };
  }
  const envName = args.envName ?? recorded.name;
  const envOptions = args.envOptions ?? (envName === recorded.name ? { ...recorded.options } : {});
  const same = envName === recorded.name && canonicalJson(envOptions) === canonicalJson(recorded.options);
  if (!same && !args.otherEnv) {
    throw new ConfigError(
      `run ${manifest.runId} was trained on ${recorded.name} ${JSON.stringify(recorded.options)}, not ${envName} ${JSON.stringify(envOptions)}; ` +
        "drop --env / --env-options to evaluate on the run's task, or add --other-env to evaluate on this one",
    );
  }
  return { envName, envOptions };
}
