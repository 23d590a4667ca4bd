// Option checking for the environments: done when an environment is built, with messages that say how to
// fix the value. Unknown option names are rejected (as OpenEnv's extra="forbid").
import { ConfigError } from '../core/errors.js';
import type { TurnLimits } from './contract.js';

/** Throws for keys not in `known`, naming the ones that are. */
export function rejectUnknownOptions(envName: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new ConfigError(`${envName}: unknown option '${key}'; the options are ${known.join(', ')}.`);
    }
  }
}

export function integerOption(envName: string, name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${envName}: option ${name}=${String(value)} must be an integer between ${min} and ${max}.`);
  }
  return value;
}

/** A probability in [min, max] (max defaults to 1). */
export function probabilityOption(envName: string, name: string, value: number, min = 0, max = 1): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`${envName}: option ${name}=${String(value)} must be a number between ${min} and ${max}.`);
  }
  return value;
}

/**
 * A finite number on one side of 0 (0 included): `sign` 1 for ≥ 0, −1 for ≤ 0. `hint` says what 0 means
 * and gives an example, e.g. "0 = off, e.g. 1".
 */
export function signedOption(envName: string, name: string, value: number, sign: 1 | -1, hint: string): number {
  if (!(Number.isFinite(value) && sign * value >= 0)) {
    throw new ConfigError(`${envName} option ${name} must be a number ${sign > 0 ? '≥' : '≤'} 0 (${hint}), got ${String(value)}`);
  }
  return value;
}

export function booleanOption(envName: string, name: string, value: boolean): boolean {
  if (typeof value !== 'boolean') {
    throw new ConfigError(`${envName}: option ${name}=${String(value)} must be true or false.`);
  }
  return value;
}

export function nameOption(envName: string, name: string, value: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z][A-Za-z0-9 _-]{0,31}$/.test(value)) {
    throw new ConfigError(`${envName}: option ${name}=${JSON.stringify(value)} must be 1-32 letters, digits, spaces, '_' or '-', starting with a letter (it is an action name).`);
  }
  return value;
}

/** Checks the shared turn limits; maxActionsPerEpisode must allow at least one action. */
export function turnLimits(envName: string, limits: TurnLimits): TurnLimits {
  return {
    maxTurns: integerOption(envName, 'maxTurns', limits.maxTurns, 1, 1000),
    maxActionsPerTurn: integerOption(envName, 'maxActionsPerTurn', limits.maxActionsPerTurn, 1, 100),
    maxActionsPerEpisode: integerOption(envName, 'maxActionsPerEpisode', limits.maxActionsPerEpisode, 1, 100_000),
  };
}
