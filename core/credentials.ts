// How trajflow logs in to a secured Kafka or ClickHouse: SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and TLS
// for Kafka, a user and password (over HTTP or HTTPS) for ClickHouse. Built from the environment when the
// config is built, checked then, every message naming the variable to change. Passwords and private keys are
// held in a Secret, which prints as "[redacted]" in logs, JSON dumps and util.inspect: only the clients that
// send them call reveal().
import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

type Env = Record<string, string | undefined>;
/** Variables whose value came from the config file → where in it (core/service-sections.ts), for messages. */
type Origins = ReadonlyMap<string, string>;

const REDACTED = '[redacted]';

/** A password or key: never printed, only revealed to the client that sends it. */
export class Secret {
  readonly #value: string;
  /** The variable it came from, to name in messages (e.g. TRAJFLOW_KAFKA_SASL_PASSWORD_FILE). */
  readonly setting: string;

  constructor(value: string, setting: string) {
    this.#value = value;
    this.setting = setting;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Secret(${REDACTED} from ${this.setting})`;
  }
}

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
const MECHANISMS: readonly SaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512'];

export interface KafkaSasl {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  readonly password: Secret;
}

export interface KafkaTls {
  /** PEM of the CA that signed the brokers' certificates (TRAJFLOW_KAFKA_TLS_CA_FILE); unset: the system's CAs. */
  readonly ca?: string;
  /** PEM client certificate and key, for brokers that ask for one (mutual TLS). */
  readonly cert?: string;
  readonly key?: Secret;
}

export interface KafkaSecurity {
  readonly sasl?: KafkaSasl;
  readonly tls?: KafkaTls;
}

export interface ClickHouseCredentials {
  readonly user: string;
  readonly password: Secret;
}

const set = (env: Env, name: string): string | undefined => (env[name] === undefined || env[name] === '' ? undefined : env[name]);

function readSettingFile(name: string, path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${name}=${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): give the path of ${what}.`);
  }
}

/** A secret from NAME or from the file NAME_FILE names (one trailing newline dropped); never both. */
export function secretSetting(env: Env, name: string, origins: Origins = new Map()): Secret | undefined {
  const direct = set(env, name);
  const file = set(env, `${name}_FILE`);
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(`${name} and ${name}_FILE are both set: keep one (${name}_FILE names a file holding the secret).`);
  }
  const named = (setting: string): string => (origins.has(setting) ? `${setting} (set by config file ${origins.get(setting)})` : setting);
  if (file !== undefined) return new Secret(readSettingFile(`${name}_FILE`, file, 'a file holding the secret').replace(/\r?\n$/, ''), named(`${name}_FILE`));
  return direct === undefined ? undefined : new Secret(direct, named(name));
}

function kafkaSasl(env: Env, origins: Origins): KafkaSasl | undefined {
  const rawMechanism = set(env, 'TRAJFLOW_KAFKA_SASL_MECHANISM');
  const username = set(env, 'TRAJFLOW_KAFKA_SASL_USERNAME');
  const password = secretSetting(env, 'TRAJFLOW_KAFKA_SASL_PASSWORD', origins);
  if (rawMechanism === undefined) {
    if (username !== undefined || password !== undefined) {
      const which = username !== undefined ? 'TRAJFLOW_KAFKA_SASL_USERNAME' : password!.setting;
      throw new ConfigError(`${which} is set but TRAJFLOW_KAFKA_SASL_MECHANISM is not: set it to ${MECHANISMS.join(', ')}.`);
    }
    return undefined;
  }
  const mechanism = rawMechanism.toLowerCase() as SaslMechanism;
  if (!MECHANISMS.includes(mechanism)) {
    throw new ConfigError(`TRAJFLOW_KAFKA_SASL_MECHANISM='${rawMechanism}' is not supported: use ${MECHANISMS.join(', ')}.`);
  }
  if (username === undefined) throw new ConfigError(`TRAJFLOW_KAFKA_SASL_MECHANISM=${rawMechanism} needs TRAJFLOW_KAFKA_SASL_USERNAME: set the user to log in as.`);
  if (password === undefined) {
    throw new ConfigError(
      `TRAJFLOW_KAFKA_SASL_MECHANISM=${rawMechanism} needs a password: set TRAJFLOW_KAFKA_SASL_PASSWORD, or TRAJFLOW_KAFKA_SASL_PASSWORD_FILE to a file holding it.`,
    );
  }
  return { mechanism, username, password };
}

function kafkaTls(env: Env): KafkaTls | undefined {
  const flag = set(env, 'TRAJFLOW_KAFKA_TLS');
  if (flag !== undefined && !['0', '1', 'true', 'false'].includes(flag)) throw new ConfigError(`TRAJFLOW_KAFKA_TLS='${flag}' must be 1 (TLS on) or 0 (off).`);
  const caFile = set(env, 'TRAJFLOW_KAFKA_TLS_CA_FILE');
  const certFile = set(env, 'TRAJFLOW_KAFKA_TLS_CERT_FILE');
  const keyFile = set(env, 'TRAJFLOW_KAFKA_TLS_KEY_FILE');
  const files = [caFile, certFile, keyFile].some((f) => f !== undefined);
  const off = flag === '0' || flag === 'false';
  if (off && files) throw new ConfigError('TRAJFLOW_KAFKA_TLS=0 but a TRAJFLOW_KAFKA_TLS_*_FILE is set: unset the file or set TRAJFLOW_KAFKA_TLS=1.');
  if (off || (flag === undefined && !files)) return undefined;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError('TRAJFLOW_KAFKA_TLS_CERT_FILE and TRAJFLOW_KAFKA_TLS_KEY_FILE go together (a client certificate and its key): set both or neither.');
  }
  return {
    ...(caFile !== undefined ? { ca: readSettingFile('TRAJFLOW_KAFKA_TLS_CA_FILE', caFile, "the PEM file of the CA that signed the brokers' certificates") } : {}),
    ...(certFile !== undefined ? { cert: readSettingFile('TRAJFLOW_KAFKA_TLS_CERT_FILE', certFile, 'the PEM client certificate') } : {}),
    ...(keyFile !== undefined ? { key: new Secret(readSettingFile('TRAJFLOW_KAFKA_TLS_KEY_FILE', keyFile, 'the PEM client key'), 'TRAJFLOW_KAFKA_TLS_KEY_FILE') } : {}),
  };
}

/** SASL and TLS for Kafka; `managed` (trajflow runs its own plaintext broker) refuses both. */
export function kafkaSecurity(env: Env, managed: boolean, origins: Origins = new Map()): KafkaSecurity {
  const sasl = kafkaSasl(env, origins);
  const tls = kafkaTls(env);
  if (managed && (sasl !== undefined || tls !== undefined)) {
    throw new ConfigError(
      `${sasl ? 'TRAJFLOW_KAFKA_SASL_MECHANISM' : 'TRAJFLOW_KAFKA_TLS'} is set but the broker trajflow starts has no authentication or TLS: set TRAJFLOW_KAFKA_BROKERS to the secured cluster's brokers.`,
    );
  }
  return { ...(sasl ? { sasl } : {}), ...(tls ? { tls } : {}) };
}

/** The ClickHouse user and password, or undefined for the server's `default` user without a password. */
export function clickHouseCredentials(env: Env, managed: boolean, origins: Origins = new Map()): ClickHouseCredentials | undefined {
  const user = set(env, 'TRAJFLOW_CLICKHOUSE_USER');
  const password = secretSetting(env, 'TRAJFLOW_CLICKHOUSE_PASSWORD', origins);
  if (user === undefined && password === undefined) return undefined;
  if (managed) {
    throw new ConfigError(
      `${user !== undefined ? 'TRAJFLOW_CLICKHOUSE_USER' : password!.setting} is set but the ClickHouse trajflow starts has only the 'default' user without a password: set TRAJFLOW_CLICKHOUSE_URL to the secured server.`,
    );
  }
  if (user !== undefined && !/^[A-Za-z0-9_.@-]+$/.test(user)) {
    throw new ConfigError(`TRAJFLOW_CLICKHOUSE_USER='${user}' is not a user name: use letters, digits, '_', '.', '@' and '-'.`);
  }
  return { user: user ?? 'default', password: password ?? new Secret('', 'TRAJFLOW_CLICKHOUSE_PASSWORD') };
}

/** `url` with any user:password@ replaced by "***@", for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/)[^/@]*@/, '$1***@');
}
