// Named environment errors (Gymnasium's error.py spirit: ResetNeeded, InvalidAction…), rooted at
// TrajflowError. None of them is retriable: they are programming errors of the caller.
import { TrajflowError } from '../core/errors.js';

/** step() was called before the first reset() (Gymnasium's OrderEnforcing raises the same). */
export class ResetNeededError extends TrajflowError {
  constructor(envName: string) {
    super('ENV_RESET_NEEDED', `${envName}: step() called before reset(seed); call reset(seed) first.`);
  }
}

/** step() was called after the episode ended (terminated or truncated). */
export class EpisodeOverError extends TrajflowError {
  constructor(envName: string, how: 'terminated' | 'truncated') {
    super('ENV_EPISODE_OVER', `${envName}: step() called after the episode was ${how}; call reset(seed) to start a new one.`);
  }
}

/** reset() got a seed that is not a non-negative safe integer. */
export class InvalidSeedError extends TrajflowError {
  constructor(envName: string, seed: unknown) {
    super('ENV_INVALID_SEED', `${envName}: seed ${String(seed)} is not usable: pass an integer between 0 and ${Number.MAX_SAFE_INTEGER}.`);
  }
}

/** A seed from the held-out evaluation range was used for training (see seeds.ts). */
export class EvalSeedInTrainingError extends TrajflowError {
  constructor(seed: number, firstEvalSeed: number) {
    super('ENV_EVAL_SEED_IN_TRAINING', `seed ${seed} is a held-out evaluation seed (>= ${firstEvalSeed}); training must draw seeds from TRAIN_SEEDS.`);
  }
}

/** checkEnv() found a broken contract; the message names the check. */
export class EnvCheckError extends TrajflowError {
  constructor(envName: string, check: string, detail: string) {
    super('ENV_CHECK', `${envName} fails checkEnv: ${check}: ${detail}`);
  }
}
