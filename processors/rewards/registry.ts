// The plug-in point for user reward functions. Register a function once at start-up, then name it in a
// spec, which can then come from JSON:
//
//   registerReward('reached_goal_fast', (trajectory) => (trajectory.success ? 1 / trajectory.stepCount : 0));
//   buildRewardFn({ terms: [{ kind: 'env_return' }, { kind: 'custom', name: 'reached_goal_fast', weight: 0.5 }] });
//
// A spec built in code can pass the function inline instead: `{ kind: 'custom', name, fn }`.
//
// In the processors a trajectory's steps are WireSteps (schemas/wire-step.ts): read their fields by name
// (step.action, step.actionTokenIds …; reading them decodes them), and count action tokens with
// actionTokenCount(step), which decodes nothing. A spread copy ({ ...step }) has only the step's scalar fields:
// the text and token fields are getters on its prototype.
import { ConfigError } from '../../core/errors.js';
import type { CustomRewardFn } from './types.js';

const registry = new Map<string, CustomRewardFn>();

/** Registers `fn` under `name`; registering a taken name throws unless `replace` is set. */
export function registerReward(name: string, fn: CustomRewardFn, { replace = false }: { replace?: boolean } = {}): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new ConfigError('registerReward: name must be a non-empty string, e.g. "reached_goal_fast".');
  }
  if (typeof fn !== 'function') {
    throw new ConfigError(`registerReward('${name}'): fn must be a function (trajectory) => number | { perStep: number[] }.`);
  }
  if (registry.has(name) && !replace) {
    throw new ConfigError(`registerReward('${name}'): a reward function is already registered under that name; pick another name or pass { replace: true }.`);
  }
  registry.set(name, fn);
}

/** Removes a registered function (for tests); returns whether it was there. */
export function unregisterReward(name: string): boolean {
  return registry.delete(name);
}

export function registeredReward(name: string): CustomRewardFn | undefined {
  return registry.get(name);
}

export function registeredRewardNames(): string[] {
  return [...registry.keys()].sort();
}
