// Builders for detector configs: defaults merged with overrides, unknown options refused, and every value
// checked with a message that names the option, what it means, what was given and what would be valid.
import { ConfigError } from '../core/errors.js';

/** Defaults overlaid with the overrides that are defined; an option the defaults do not have is a ConfigError. */
export function withDefaults<T extends object>(section: string, defaults: T, overrides: Partial<T> | undefined): T {
  const merged: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (!Object.hasOwn(defaults, key)) {
      throw new ConfigError(`${section}.${key} is not an option; the options of ${section} are ${Object.keys(defaults).join(', ')}.`);
    }
    if (value !== undefined) merged[key] = value;
  }
  return merged as T;
}

/** Checks of one config section; each failing check throws a ConfigError naming `${section}.${key}`. */
export class Checks {
  constructor(
    readonly section: string,
    private readonly defaults: object,
  ) {}

  private fail(key: string, value: unknown, want: string, meaning: string): never {
    const fallback = (this.defaults as Record<string, unknown>)[key];
    const hint = fallback === undefined ? '' : ` (default ${String(fallback)})`;
    throw new ConfigError(`${this.section}.${key} must be ${want}, got ${String(value)}: it is the ${meaning}. Set it to ${want}${hint} or leave it out.`);
  }

  /** A number strictly between 0 and 1. */
  fraction(key: string, value: number, meaning: string): void {
    if (!(typeof value === 'number' && value > 0 && value < 1)) this.fail(key, value, 'a number in (0, 1)', meaning);
  }

  /** A finite number ≥ min (or > min with exclusive). */
  number(key: string, value: number, min: number, meaning: string, { exclusive = false } = {}): void {
    const ok = typeof value === 'number' && Number.isFinite(value) && (exclusive ? value > min : value >= min);
    if (!ok) this.fail(key, value, `a finite number ${exclusive ? '>' : '≥'} ${min}`, meaning);
  }

  /** An integer ≥ min. */
  int(key: string, value: number, min: number, meaning: string): void {
    if (!(Number.isInteger(value) && value >= min)) this.fail(key, value, `an integer ≥ ${min}`, meaning);
  }

  boolean(key: string, value: boolean, meaning: string): void {
    if (typeof value !== 'boolean') this.fail(key, value, 'true or false', meaning);
  }

  /** `low` must be below `high` (e.g. a fire threshold below its clear threshold). */
  ordered(lowKey: string, low: number, highKey: string, high: number, why: string, { strict = true } = {}): void {
    if (strict ? low < high : low <= high) return;
    throw new ConfigError(
      `${this.section}.${lowKey} (${low}) must be ${strict ? 'below' : 'at most'} ${this.section}.${highKey} (${high}): ${why}. Lower ${lowKey} or raise ${highKey}.`,
    );
  }
}
