// The HTTP API's configuration: one typed object, built from the environment (TRAJFLOW_DASHBOARD_*) plus
// explicit overrides (command-line flags, tests), and checked when built. Every ConfigError names the
// variable or flag to change and what would be valid, so a bad value never surfaces later as a 500.
import { ConfigError } from '../core/errors.js';
import { parseAllowedHost } from './host-check.js';

export interface RateLimitConfig {
  /** Steps a token may publish per second, on average (the bucket's refill rate). */
  readonly stepsPerSecond: number;
  /** Steps a token may publish at once after being idle (the bucket's size); at least maxStepsPerRequest. */
  readonly burst: number;
}

export interface ApiConfig {
  /** Interface to bind (default 127.0.0.1). Anything but loopback needs at least one token. */
  readonly host: string;
  /** Port to bind (default 18080); 0 picks a free port (tests). */
  readonly port: number;
  /** Bearer tokens accepted on writes (and on reads when not bound to loopback); empty = no auth. */
  readonly tokens: readonly string[];
  /** Largest request body accepted, in bytes (default 1 MiB); larger bodies get 413. */
  readonly maxBodyBytes: number;
  /** Most steps in one POST /v1/steps (default 1000); more gets 413. */
  readonly maxStepsPerRequest: number;
  /** Per-token token bucket on written steps. */
  readonly rateLimit: RateLimitConfig;
  /** How long a write waits for Kafka's acknowledgement before answering 503 (default 10 s). */
  readonly publishTimeoutMs: number;
  /** Most event streams (GET /v1/events) open at once (default 32); one more is a 503. */
  readonly maxEventStreams: number;
  /** Most event streams one client (remote address) may have open (default 8); one more is a 503. */
  readonly maxEventStreamsPerClient: number;
  /**
   * Host names (`name` for any port, `name:port`) the server answers for besides localhost, 127.0.0.1, [::1]
   * and its own address with its port; other Host or Origin headers are a 403 (host-check.ts: DNS rebinding).
   * null: no Host check (the default when bound beyond loopback; `*` in the environment).
   */
  readonly allowedHosts: readonly string[] | null;
}

export const DEFAULT_API_PORT = 18080;

export const defaultApiConfig: ApiConfig = Object.freeze({
  host: '127.0.0.1',
  port: DEFAULT_API_PORT,
  tokens: Object.freeze([]) as readonly string[],
  maxBodyBytes: 1024 * 1024,
  maxStepsPerRequest: 1000,
  rateLimit: Object.freeze({ stepsPerSecond: 1000, burst: 2000 }),
  publishTimeoutMs: 10_000,
  maxEventStreams: 32,
  maxEventStreamsPerClient: 8,
  allowedHosts: Object.freeze([]) as readonly string[],
});

/** Overrides from flags or code; a field left undefined falls back to the environment, then the default. */
export type ApiConfigOverrides = {
  readonly [K in keyof ApiConfig]?: K extends 'rateLimit' ? Partial<RateLimitConfig> : ApiConfig[K];
};

type Env = Record<string, string | undefined>;

const ENV = {
  host: 'TRAJFLOW_DASHBOARD_HOST',
  port: 'TRAJFLOW_DASHBOARD_PORT',
  tokens: 'TRAJFLOW_DASHBOARD_TOKENS',
  maxBodyBytes: 'TRAJFLOW_DASHBOARD_MAX_BODY_BYTES',
  maxStepsPerRequest: 'TRAJFLOW_DASHBOARD_MAX_STEPS_PER_REQUEST',
  stepsPerSecond: 'TRAJFLOW_DASHBOARD_RATE_STEPS_PER_SECOND',
  burst: 'TRAJFLOW_DASHBOARD_RATE_BURST',
  publishTimeoutMs: 'TRAJFLOW_DASHBOARD_PUBLISH_TIMEOUT_MS',
  maxEventStreams: 'TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS',
  maxEventStreamsPerClient: 'TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS_PER_CLIENT',
  allowedHosts: 'TRAJFLOW_DASHBOARD_ALLOWED_HOSTS',
} as const;

/** A number from the environment, or undefined when the variable is unset or empty. */
function envNumber(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(`${name}='${raw}' is not a number: set it to a number or unset it for the default.`);
  return value;
}

function integerIn(what: string, value: number, min: number, max: number, fallback: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${what} is ${value}: set it to an integer between ${min} and ${max} (default ${fallback}).`);
  }
  return value;
}

/** RFC 6750 b64token characters; at least 16 of them, so a token cannot be guessed by trying. */
const TOKEN = /^[A-Za-z0-9\-._~+/]{16,}=*$/;

function checkTokens(what: string, tokens: readonly string[]): readonly string[] {
  for (const [i, token] of tokens.entries()) {
    if (!TOKEN.test(token)) {
      throw new ConfigError(
        `${what}: token ${i + 1} is not usable: a token needs at least 16 characters from A-Z a-z 0-9 - . _ ~ + / ` +
          `(e.g. \`openssl rand -hex 24\`); separate several tokens with commas.`,
      );
    }
  }
  if (new Set(tokens).size !== tokens.length) throw new ConfigError(`${what} lists the same token twice: remove the duplicate.`);
  return Object.freeze([...tokens]);
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[?[0-9A-Fa-f:.]+\]?)$/;

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || bare === '::ffff:127.0.0.1' || /^127(?:\.\d{1,3}){3}$/.test(bare);
}

/** The interface to bind: the override, else the environment, else loopback; a host name or an IP address. */
function hostOf(override: string | undefined, env: Env): string {
  const host = override ?? (env[ENV.host]?.trim() || defaultApiConfig.host);
  if (!HOST.test(host)) {
    throw new ConfigError(`the dashboard host '${host}' is not a host name or IP address: pass --host 127.0.0.1 (or set ${ENV.host}).`);
  }
  return host;
}

/** The bearer tokens: the override, else the environment's comma-separated list; each checked, none twice. */
function tokensOf(override: readonly string[] | undefined, env: Env): readonly string[] {
  const raw =
    override ??
    (env[ENV.tokens] ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  return checkTokens(override ? 'the configured tokens' : ENV.tokens, raw);
}

/** The per-token bucket: a positive rate, and a burst (default at least a full batch) that a full batch fits in. */
function rateLimitOf(override: Partial<RateLimitConfig> | undefined, env: Env, maxStepsPerRequest: number): RateLimitConfig {
  const d = defaultApiConfig.rateLimit;
  const stepsPerSecond = override?.stepsPerSecond ?? envNumber(env, ENV.stepsPerSecond) ?? d.stepsPerSecond;
  if (!(stepsPerSecond > 0) || !Number.isFinite(stepsPerSecond)) {
    throw new ConfigError(`${ENV.stepsPerSecond} is ${stepsPerSecond}: set it to a rate above 0 steps per second (default ${d.stepsPerSecond}).`);
  }
  const burst = integerIn(`${ENV.burst}`, override?.burst ?? envNumber(env, ENV.burst) ?? Math.max(d.burst, maxStepsPerRequest), 1, 10_000_000, d.burst);
  if (burst < maxStepsPerRequest) {
    // A request bigger than the bucket could never be admitted; it would be told to retry forever.
    throw new ConfigError(
      `${ENV.burst} (${burst}) is below ${ENV.maxStepsPerRequest} (${maxStepsPerRequest}): a full batch could never pass the rate limit. ` +
        `Raise the burst or lower the batch size.`,
    );
  }
  return Object.freeze({ stepsPerSecond, burst });
}

/** The event stream limits, in all and per client (default at most the total); per client never above the total. */
function eventStreamLimitsOf(overrides: ApiConfigOverrides, env: Env): Pick<ApiConfig, 'maxEventStreams' | 'maxEventStreamsPerClient'> {
  const d = defaultApiConfig;
  const maxEventStreams = integerIn(`${ENV.maxEventStreams}`, overrides.maxEventStreams ?? envNumber(env, ENV.maxEventStreams) ?? d.maxEventStreams, 1, 10_000, d.maxEventStreams);
  const maxEventStreamsPerClient = integerIn(
    `${ENV.maxEventStreamsPerClient}`,
    overrides.maxEventStreamsPerClient ?? envNumber(env, ENV.maxEventStreamsPerClient) ?? Math.min(d.maxEventStreamsPerClient, maxEventStreams),
    1,
    10_000,
    d.maxEventStreamsPerClient,
  );
  if (maxEventStreamsPerClient > maxEventStreams) {
    throw new ConfigError(
      `${ENV.maxEventStreamsPerClient} (${maxEventStreamsPerClient}) is above ${ENV.maxEventStreams} (${maxEventStreams}): one client could still take every stream. Lower it.`,
    );
  }
  return { maxEventStreams, maxEventStreamsPerClient };
}

/**
 * Builds the API config from `env` (default process.env) and `overrides`, checking every field.
 * Throws ConfigError with a message saying what to change.
 */
export function loadApiConfig(overrides: ApiConfigOverrides = {}, env: Env = process.env): ApiConfig {
  const d = defaultApiConfig;
  const host = hostOf(overrides.host, env);
  const port = integerIn(`the dashboard port (--port or ${ENV.port})`, overrides.port ?? envNumber(env, ENV.port) ?? d.port, 0, 65535, d.port);
  const tokens = tokensOf(overrides.tokens, env);
  const maxBodyBytes = integerIn(`${ENV.maxBodyBytes}`, overrides.maxBodyBytes ?? envNumber(env, ENV.maxBodyBytes) ?? d.maxBodyBytes, 1024, 64 * 1024 * 1024, d.maxBodyBytes);
  const maxStepsPerRequest = integerIn(
    `${ENV.maxStepsPerRequest}`,
    overrides.maxStepsPerRequest ?? envNumber(env, ENV.maxStepsPerRequest) ?? d.maxStepsPerRequest,
    1,
    100_000,
    d.maxStepsPerRequest,
  );
  const rateLimit = rateLimitOf(overrides.rateLimit, env, maxStepsPerRequest);
  const publishTimeoutMs = integerIn(
    `${ENV.publishTimeoutMs}`,
    overrides.publishTimeoutMs ?? envNumber(env, ENV.publishTimeoutMs) ?? d.publishTimeoutMs,
    100,
    300_000,
    d.publishTimeoutMs,
  );
  const { maxEventStreams, maxEventStreamsPerClient } = eventStreamLimitsOf(overrides, env);
  return Object.freeze({
    host,
    port,
    tokens,
    maxBodyBytes,
    maxStepsPerRequest,
    rateLimit,
    publishTimeoutMs,
    maxEventStreams,
    maxEventStreamsPerClient,
    allowedHosts: allowedHostsOf(overrides.allowedHosts, env, host),
  });
}

/**
 * The Host allow-list: from the override or the environment (comma-separated; `*` alone turns the check off),
 * else on (loopback names only) when bound to loopback and off otherwise — on loopback, where reads need no
 * token, a DNS-rebinding page must not be answered; beyond it every read needs a token anyway.
 */
function allowedHostsOf(override: readonly string[] | null | undefined, env: Env, host: string): readonly string[] | null {
  const raw =
    override !== undefined
      ? override
      : env[ENV.allowedHosts]?.trim()
        ? env[ENV.allowedHosts]!.split(',')
            .map((h) => h.trim())
            .filter((h) => h !== '')
        : undefined;
  if (raw === undefined) return isLoopback(host) ? Object.freeze([]) : null;
  if (raw === null || (raw.length === 1 && raw[0] === '*')) return null;
  for (const entry of raw) {
    if (!parseAllowedHost(entry)) {
      throw new ConfigError(
        `${override !== undefined ? 'the allowed hosts' : ENV.allowedHosts}: '${entry}' is not a host name or address with an optional :port ` +
          `(e.g. dashboard.example.com, dashboard.example.com:443, [::1]:18080); separate several with commas, or set '*' to turn the Host check off.`,
      );
    }
  }
  return Object.freeze([...raw]);
}

/**
 * Refuses a server anyone on the network could write to: binding beyond loopback needs a token.
 * Called by startHttpServer before it binds.
 */
export function checkExposure(config: Pick<ApiConfig, 'host' | 'tokens'>): void {
  if (!isLoopback(config.host) && config.tokens.length === 0) {
    throw new ConfigError(
      `refusing to serve on ${config.host} without authentication: anyone who can reach it could publish steps. ` +
        `Set ${ENV.tokens} to one or more tokens (e.g. \`openssl rand -hex 24\`), or bind to 127.0.0.1.`,
    );
  }
}
