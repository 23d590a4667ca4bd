// The service sections of the config file: its "kafka" and "clickhouse" sections stand for the TRAJFLOW_KAFKA_* and
// TRAJFLOW_CLICKHOUSE_* variables ({"kafka": {"saslMechanism": "scram-sha-512"}} is
// TRAJFLOW_KAFKA_SASL_MECHANISM=scram-sha-512), so one set of checks and messages covers both. A variable set in
// the environment wins over the file, as a typed flag wins over the file's flags. The file is the one
// TRAJFLOW_CONFIG names (bin/main.ts sets it for `--config FILE` when the file has sections).
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigError } from './errors.js';

type Env = Record<string, string | undefined>;

/** The sections of a config file that hold service settings, not a command's flags. */
export const SERVICE_SECTIONS = ['kafka', 'clickhouse'] as const;

const KEYS: Record<(typeof SERVICE_SECTIONS)[number], readonly string[]> = {
  kafka: ['brokers', 'saslMechanism', 'saslUsername', 'saslPassword', 'saslPasswordFile', 'tls', 'tlsCaFile', 'tlsCertFile', 'tlsKeyFile'],
  clickhouse: ['url', 'db', 'user', 'password', 'passwordFile'],
};

const variable = (section: string, key: string): string => `TRAJFLOW_${section.toUpperCase()}_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

export interface ServiceEnv {
  /** The environment with the file's settings added where the environment has none. */
  readonly env: Env;
  /** Variables whose value came from the file → "<file> kafka.saslMechanism", for messages. */
  readonly fromFile: ReadonlyMap<string, string>;
}

/** `env` plus the service settings of the file TRAJFLOW_CONFIG names (none when it is unset or has no such section). */
export function withServiceSections(env: Env): ServiceEnv {
  const path = env.TRAJFLOW_CONFIG;
  if (path === undefined || path === '') return { env, fromFile: new Map() };
  let file: unknown;
  try {
    file = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return { env, fromFile: new Map() }; // infra/cli/config-file.ts reports an unreadable file with its own message
  }
  if (typeof file !== 'object' || file === null) return { env, fromFile: new Map() };
  const merged: Env = { ...env };
  const fromFile = new Map<string, string>();
  for (const section of SERVICE_SECTIONS) {
    const settings = (file as Record<string, unknown>)[section];
    if (settings === undefined) continue;
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
      throw new ConfigError(`config file ${path}: "${section}" must be an object of settings such as {"${section}": {"${KEYS[section][1]}": "…"}}`);
    }
    for (const [key, value] of Object.entries(settings)) {
      if (!KEYS[section].includes(key)) throw new ConfigError(`config file ${path}: "${section}.${key}" is not a setting; use one of ${KEYS[section].join(', ')}`);
      const name = variable(section, key);
      if (merged[name] !== undefined && merged[name] !== '') continue;
      merged[name] = settingValue(value, `${section}.${key}`, path, key.endsWith('File'));
      fromFile.set(name, `${path} ${section}.${key}`);
    }
  }
  return { env: merged, fromFile };
}

function settingValue(value: unknown, where: string, path: string, isFile: boolean): string {
  if (value === true) return '1';
  if (value === false) return '0';
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(',');
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') throw new ConfigError(`config file ${path}: "${where}" must be a string, number or boolean`);
  // A file named in the config file is relative to the config file, wherever the command runs.
  return isFile && !isAbsolute(value) ? resolve(dirname(path), value) : value;
}

/** A refused setting that came from the file gets the file's name and key, so the user knows where to fix it. */
export function blameServiceSetting(error: unknown, fromFile: ReadonlyMap<string, string>): unknown {
  if (!(error instanceof ConfigError) || fromFile.size === 0) return error;
  const culprit = [...fromFile.entries()].find(([name]) => new RegExp(`\\b${name}\\b`).test(error.message));
  return culprit ? new ConfigError(`${error.message} (${culprit[0]} was set by config file ${culprit[1]})`) : error;
}
