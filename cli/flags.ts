// Flag values shared by the subcommands, checked with messages that say what to pass.
import { ConfigError } from '../core/errors.js';

/** The value of `--name` as a positive integer, or `fallback` when the flag was not given. */
export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`--${name} needs a positive integer, got '${raw}'`);
  return value;
}
