// Settings from a JSON file for any subcommand: `trajflow <command> --config trajflow.json`, or the file
// named by TRAJFLOW_CONFIG. The file's settings become flags placed before the ones typed, so typed flags
// win and every value goes through the command's own checks (one parser, one set of messages).
//
// Two shapes are accepted:
//   flat      {"env": "Sokoban", "updates": 200}                       — settings of the command being run
//   sections  {"train": {"env": "Sokoban"}, "learner": {"lr": 1e-3}}  — one object per command, keyed by name
// Keys are flag names without dashes, in kebab-case or camelCase ("groupSize" → --group-size). Values:
// strings and numbers as given, true → the bare switch, false/null → left out, arrays → the flag repeated,
// objects → their JSON (for flags that take JSON, e.g. --env-options, --loss).
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/errors.js';
import { SERVICE_SECTIONS } from '../../core/service-sections.js';

export interface ConfigFileArgs {
  /** The command's arguments with the file's flags spliced in and `--config` removed. */
  readonly args: string[];
  /** The file read, if any. */
  readonly path?: string;
  /** Flags (with dashes) that came from the file, to name the file when one of them is refused. */
  readonly fromFile: readonly string[];
  /** True when the file holds one section per command (so child commands can read theirs too). */
  readonly sectioned?: boolean;
}

type Env = Record<string, string | undefined>;

/** Reads `--config FILE` (or `--config=FILE`, else TRAJFLOW_CONFIG) and splices its settings into `args`. */
export function withConfigFile(command: string, args: readonly string[], commandNames: readonly string[], env: Env = process.env): ConfigFileArgs {
  const rest: string[] = [];
  let path: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--config') {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new ConfigError('--config needs a file name, e.g. --config trajflow.json');
      path = value;
      i++;
    } else if (arg.startsWith('--config=')) {
      path = arg.slice('--config='.length);
    } else {
      rest.push(arg);
    }
  }
  const fromEnv = path === undefined;
  path ??= env.TRAJFLOW_CONFIG === '' ? undefined : env.TRAJFLOW_CONFIG;
  if (path === undefined) return { args: rest, fromFile: [] };

  const file = readObject(path);
  const sectioned = Object.keys(file).some((k) => isSection(k, commandNames));
  // Every command reads TRAJFLOW_CONFIG, so a flat file there would hand one command's flags to all.
  if (fromEnv && !sectioned && Object.keys(file).length > 0) {
    throw new ConfigError(
      `TRAJFLOW_CONFIG=${path} is read by every command, so it needs one section per command, e.g. {"train": {"env": "FrozenLake"}}; pass a flat file with --config instead`,
    );
  }
  const settings = sectionFor(command, file, commandNames, path);
  const fileArgs = settingsToArgs(settings, path);
  // After leading positionals (`bench learning …`), before the typed flags.
  const split = rest.findIndex((a) => a.startsWith('-'));
  const at = split === -1 ? rest.length : split;
  return { args: [...rest.slice(0, at), ...fileArgs, ...rest.slice(at)], path, fromFile: fileArgs.filter((a) => a.startsWith('--')), sectioned };
}

function readObject(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`config file ${path}: ${(error as Error).message}; give a JSON object such as {"train": {"env": "FrozenLake", "updates": 100}}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object such as {"train": {"env": "FrozenLake", "updates": 100}}`);
  }
  return parsed as Record<string, unknown>;
}

/** A command's section, or a service's ("kafka", "clickhouse": core/service-sections.ts reads those). */
const isSection = (key: string, commandNames: readonly string[]): boolean => commandNames.includes(key) || (SERVICE_SECTIONS as readonly string[]).includes(key);

/** The settings for `command`: its section in a sectioned file, or the whole flat file. */
export function sectionFor(command: string, file: Record<string, unknown>, commandNames: readonly string[], path: string): Record<string, unknown> {
  const keys = Object.keys(file);
  const sections = keys.filter((k) => isSection(k, commandNames));
  if (sections.length === 0) return file;
  const strays = keys.filter((k) => !isSection(k, commandNames));
  if (strays.length > 0) {
    throw new ConfigError(
      `config file ${path} mixes command sections (${sections.join(', ')}) with top-level settings (${strays.join(', ')}): put each setting under the command it is for`,
    );
  }
  const section = file[command];
  if (section === undefined) return {};
  if (typeof section !== 'object' || section === null || Array.isArray(section)) {
    throw new ConfigError(`config file ${path}: "${command}" must be an object of settings such as {"${command}": {…}}`);
  }
  return section as Record<string, unknown>;
}

/** Settings as command-line flags (see the header for how each JSON type is written). */
export function settingsToArgs(settings: Record<string, unknown>, path: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(settings)) {
    if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(key))
      throw new ConfigError(`config file ${path}: "${key}" is not a setting name; use flag names without dashes, e.g. "group-size" or "groupSize"`);
    if (key === 'config') throw new ConfigError(`config file ${path}: a config file cannot name another config file`);
    const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const one = (v: unknown): string[] => {
      if (v === true) return [flag];
      if (v === false || v === null) return [];
      if (typeof v === 'string' || typeof v === 'number') return [flag, String(v)];
      return [flag, JSON.stringify(v)];
    };
    if (Array.isArray(value)) for (const v of value) out.push(...one(v));
    else out.push(...one(value));
  }
  return out;
}

/** A refusal of a flag the file set gets the file's name, so the user knows where to fix it. */
export function blameConfigFile(message: string, config: ConfigFileArgs): string {
  if (config.path === undefined) return message;
  const culprit = config.fromFile.find((flag) => message.includes(`${flag}'`) || message.includes(`${flag} `) || message.endsWith(flag));
  return culprit ? `${message} (${culprit} was set by config file ${config.path})` : message;
}
