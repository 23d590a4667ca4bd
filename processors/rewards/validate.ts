// Checks a RewardSpec when the reward function is built: every message names the
// term and says what would be valid.
import { ConfigError } from '../../core/errors.js';
import { registeredReward, registeredRewardNames } from './registry.js';
import type { RewardSpec, RewardTerm, RewardTermKind } from './types.js';

export const rewardTermKinds: readonly RewardTermKind[] = ['env_return', 'success', 'invalid_action_penalty', 'step_penalty', 'overlong_penalty', 'custom'];

/** The key of a term in `parts`. */
export function termName(term: RewardTerm): string {
  return term.name ?? term.kind;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finite(where: string, field: string, value: unknown, hint: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ConfigError(`${where}: ${field} must be a finite number (${hint}), got ${JSON.stringify(value)}.`);
  }
  return value;
}

function checkTerm(raw: unknown, index: number): RewardTerm {
  const where = `reward term #${index}`;
  if (!isRecord(raw)) throw new ConfigError(`${where} must be an object like { kind: 'env_return' }, got ${JSON.stringify(raw)}.`);
  const kind = raw.kind;
  if (typeof kind !== 'string' || !(rewardTermKinds as readonly string[]).includes(kind)) {
    throw new ConfigError(`${where}: kind must be one of ${rewardTermKinds.join(', ')}; got ${JSON.stringify(kind)}.`);
  }
  const at = `${where} (${kind})`;
  if (raw.weight !== undefined) finite(at, 'weight', raw.weight, 'e.g. 1, or -1 to flip the sign');
  if (raw.name !== undefined && (typeof raw.name !== 'string' || raw.name.length === 0)) {
    throw new ConfigError(`${at}: name must be a non-empty string when given.`);
  }
  switch (kind) {
    case 'invalid_action_penalty':
    case 'step_penalty': {
      const penalty = finite(at, 'penalty', raw.penalty, 'the magnitude subtracted per step, e.g. 0.1');
      if (penalty < 0) {
        throw new ConfigError(`${at}: penalty is a magnitude that is subtracted; use a positive number such as ${-penalty}.`);
      }
      break;
    }
    case 'overlong_penalty': {
      const maxLength = finite(at, 'maxLength', raw.maxLength, 'L_max in tokens, e.g. 20480');
      const cacheLength = finite(at, 'cacheLength', raw.cacheLength, 'L_buf in tokens, e.g. 4096');
      if (cacheLength <= 0) throw new ConfigError(`${at}: cacheLength (L_buf) must be > 0, e.g. 4096; got ${cacheLength}.`);
      if (cacheLength > maxLength) {
        throw new ConfigError(`${at}: cacheLength (${cacheLength}) must not exceed maxLength (${maxLength}); the penalty ramps over the last cacheLength tokens of maxLength.`);
      }
      if (raw.factor !== undefined) {
        const factor = finite(at, 'factor', raw.factor, 'the penalty at maxLength, e.g. 1.0');
        if (factor < 0) throw new ConfigError(`${at}: factor must be ≥ 0 (the penalty at maxLength is −factor); got ${factor}.`);
      }
      if (raw.scope !== undefined && raw.scope !== 'trajectory' && raw.scope !== 'turn') {
        throw new ConfigError(`${at}: scope must be 'trajectory' or 'turn'; got ${JSON.stringify(raw.scope)}.`);
      }
      break;
    }
    case 'custom': {
      if (typeof raw.name !== 'string' || raw.name.length === 0) {
        throw new ConfigError(`${at}: name is required, e.g. { kind: 'custom', name: 'my_reward', fn }.`);
      }
      if (raw.fn !== undefined && typeof raw.fn !== 'function') {
        throw new ConfigError(`${at} '${raw.name}': fn must be a function (trajectory) => number | { perStep: number[] }.`);
      }
      if (raw.fn === undefined && registeredReward(raw.name) === undefined) {
        const known = registeredRewardNames();
        throw new ConfigError(
          `${at}: no reward function is registered as '${raw.name}'. Call registerReward('${raw.name}', fn) before ` +
            `building the reward, or pass fn inline. Registered: ${known.length > 0 ? known.join(', ') : '(none)'}.`,
        );
      }
      break;
    }
    default:
      break;
  }
  return raw as unknown as RewardTerm;
}

/** Returns `spec` typed when valid; throws ConfigError saying how to fix it otherwise. */
export function validateRewardSpec(spec: unknown): RewardSpec {
  if (!isRecord(spec)) throw new ConfigError(`reward spec must be an object { terms: [...], gamma? }, got ${JSON.stringify(spec)}.`);
  if (!Array.isArray(spec.terms) || spec.terms.length === 0) {
    throw new ConfigError("reward spec: terms must be a non-empty array, e.g. [{ kind: 'env_return' }].");
  }
  const terms = spec.terms.map(checkTerm);
  const seen = new Set<string>();
  for (const term of terms) {
    const name = termName(term);
    if (seen.has(name)) {
      throw new ConfigError(`reward spec: two terms are named '${name}'; give one of them a distinct name (the key in parts).`);
    }
    seen.add(name);
  }
  if (spec.gamma !== undefined) {
    const gamma = finite('reward spec', 'gamma', spec.gamma, 'the discount in [0, 1], e.g. 0.95');
    if (gamma < 0 || gamma > 1) throw new ConfigError(`reward spec: gamma must be in [0, 1], e.g. 0.95 or 1; got ${gamma}.`);
  }
  return spec as unknown as RewardSpec;
}
