// Small helpers shared by the benchmark commands: integer flags and number formatting.

/** The positive integer after `name` in args, or `fallback` when the flag is absent. */
export function option(args: readonly string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} needs a positive integer, got '${args[at + 1] ?? ''}'`);
  return value;
}

/** A rate or count with thousands separators, rounded. */
export const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
