// Flag values shared by the subcommands, checked with messages that say what to pass.
import { ConfigError } from '../../core/errors.js';

/** The value of `--name` as a positive integer, or `fallback` when the flag was not given. */
export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`--${name} needs a positive integer, got '${raw}'`);
  return value;
}

/** The value of `--name` as an integer ≥ 0, or `fallback` when the flag was not given. */
export function nonNegativeInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) throw new ConfigError(`--${name} needs a non-negative integer, got '${raw}'`);
  return value;
}

/** Reads `--flag value` pairs, allowing only `allowed`; unknown flags and missing values are ConfigErrors naming the usage. */
export function parseFlagPairs<F extends string>(args: readonly string[], allowed: readonly F[], usage: string): Partial<Record<F, string>> {
  const flags: Partial<Record<F, string>> = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i] as F;
    if (!allowed.includes(name)) throw new ConfigError(`unknown option '${args[i]}'; usage: ${usage}`);
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) throw new ConfigError(`${name} needs a value; usage: ${usage}`);
    flags[name] = value;
  }
  return flags;
}

/** The value of a flag as a finite number (optionally > 0), or undefined when absent. */
export function numberFlag(name: string, raw: string | undefined, { positive = false } = {}): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || (positive && value <= 0)) throw new ConfigError(`--${name} needs a ${positive ? 'positive ' : ''}number, got '${raw}'`);
  return value;
}

/**
 * The value of `--name JSON` as a JSON object ({} when the flag was not given); `known` limits its keys.
 * One message for every command's JSON flags (--env-options, --model, --loss, --estimator-options, …).
 */
export function jsonObjectFlag(name: string, raw: string | undefined, options: { example: string; known?: readonly string[] }): Record<string, unknown> {
  if (raw === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`--${name} must be a JSON object such as '${options.example}', got ${raw}`);
  const unknown = options.known ? Object.keys(value).filter((key) => !options.known!.includes(key)) : [];
  if (unknown.length > 0) throw new ConfigError(`--${name}: unknown setting ${unknown.map((k) => `"${k}"`).join(', ')}; known: ${options.known!.join(', ')}`);
  return value as Record<string, unknown>;
}
