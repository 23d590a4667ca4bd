// The gateway's configuration: one typed object from flags and the environment (TRAJFLOW_GATEWAY_*), checked
// when built; every ConfigError names the flag or variable and what would be valid.
import { ConfigError } from '../core/errors.js';
import { isLoopback } from '../api/config.js';
import { ID_DESCRIPTION, ID_PATTERN } from '../schemas/ids.js';

export interface GatewayConfig {
  readonly host: string;
  /** Default 18090; 0 picks a free port. */
  readonly port: number;
  /** Bearer tokens (TRAJFLOW_GATEWAY_TOKENS); required for every call when set. Off loopback at least one is required. */
  readonly tokens: readonly string[];
  /** `policy` (trajflow's own policy) or the /v1 URL of an OpenAI-compatible server. */
  readonly upstream: 'policy' | URL;
  /** The model name served by the own policy, or the upstream's model names (first = default). */
  readonly models: readonly string[];
  /** The run recorded when a call names none, and whose policy versions the own policy follows. */
  readonly runId: string;
  /** The environment the own policy acts in (its action words), and the envName recorded by default. */
  readonly envName: string;
  /** The own policy's sampling temperature (the learner's). */
  readonly temperature: number;
  /** The learner's model settings (the own policy's version 0 is built from them). */
  readonly model: Readonly<Record<string, unknown>>;
  readonly maxBodyBytes: number;
  /** Per-token calls per second and burst. */
  readonly callsPerSecond: number;
  readonly burst: number;
  /** How long an answer waits for Kafka's acknowledgement before it is an error. */
  readonly publishTimeoutMs: number;
  /** How long an upstream call may take. */
  readonly upstreamTimeoutMs: number;
  /** An episode with no call and no finish for this long is published as truncated. */
  readonly episodeTimeoutMs: number;
  /**
   * Only this gateway records on the topic prefix: calls skip the per-call read barrier (the log is still read at
   * start, so a restart continues every open episode). Two instances that both set it can give two turns one index.
   */
  readonly singleInstance: boolean;
  readonly allowedHosts: readonly string[] | null;
}

export const DEFAULT_GATEWAY_PORT = 18090;

export type GatewayConfigInput = { readonly [K in keyof GatewayConfig]?: K extends 'upstream' ? string : GatewayConfig[K] };

type Env = Record<string, string | undefined>;

function checkRange(what: string, value: number, min: number, max: number, integer = true): number {
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${what} is ${value}: set it to ${integer ? 'an integer' : 'a number'} between ${min} and ${max}.`);
  }
  return value;
}

function envNumber(env: Env, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(`${name}='${raw}' is not a number: set a number or unset it.`);
  return value;
}

function upstreamOf(raw: string): 'policy' | URL {
  if (raw === 'policy') return 'policy';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`--upstream must be 'policy' or the http(s) URL of an OpenAI-compatible server's /v1 root (e.g. http://127.0.0.1:8000/v1), got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`--upstream ${raw}: only http and https URLs are supported`);
  return url;
}

const TOKEN = /^[A-Za-z0-9\-._~+/]{16,}=*$/;

export function loadGatewayConfig(input: GatewayConfigInput = {}, env: Env = process.env): GatewayConfig {
  const host = input.host ?? (env.TRAJFLOW_GATEWAY_HOST?.trim() || '127.0.0.1');
  const port = checkRange('the gateway port (--port or TRAJFLOW_GATEWAY_PORT)', input.port ?? envNumber(env, 'TRAJFLOW_GATEWAY_PORT') ?? DEFAULT_GATEWAY_PORT, 0, 65535);
  const tokens =
    input.tokens ??
    (env.TRAJFLOW_GATEWAY_TOKENS ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  tokens.forEach((token, i) => {
    if (!TOKEN.test(token))
      throw new ConfigError(`TRAJFLOW_GATEWAY_TOKENS: token ${i + 1} needs at least 16 characters from A-Z a-z 0-9 - . _ ~ + / (e.g. \`openssl rand -hex 24\`)`);
  });
  if (!isLoopback(host) && tokens.length === 0) {
    throw new ConfigError(`refusing to serve the gateway on ${host} without authentication: set TRAJFLOW_GATEWAY_TOKENS (e.g. \`openssl rand -hex 24\`), or bind to 127.0.0.1.`);
  }
  const upstream = upstreamOf(input.upstream ?? env.TRAJFLOW_GATEWAY_UPSTREAM ?? 'policy');
  const models = input.models ?? [upstream === 'policy' ? 'trajflow-policy' : ''];
  if (models.length === 0 || models.some((m) => m === ''))
    throw new ConfigError('--model-name is required with an --upstream URL: the model name(s) the server serves, comma-separated');
  const runId = input.runId ?? 'gateway';
  if (!ID_PATTERN.test(runId)) throw new ConfigError(`--run-id must be ${ID_DESCRIPTION}, got '${runId}'`);
  const burst = checkRange('--burst', input.burst ?? envNumber(env, 'TRAJFLOW_GATEWAY_RATE_BURST') ?? 400, 1, 1_000_000);
  return Object.freeze({
    host,
    port,
    tokens: Object.freeze([...tokens]),
    upstream,
    models: Object.freeze([...models]),
    runId,
    envName: input.envName ?? 'FrozenLake',
    temperature: checkRange('--temperature', input.temperature ?? 1, 0.01, 10, false),
    model: Object.freeze({ ...(input.model ?? {}) }),
    maxBodyBytes: checkRange('TRAJFLOW_GATEWAY_MAX_BODY_BYTES', input.maxBodyBytes ?? envNumber(env, 'TRAJFLOW_GATEWAY_MAX_BODY_BYTES') ?? 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    callsPerSecond: checkRange('--calls-per-second', input.callsPerSecond ?? envNumber(env, 'TRAJFLOW_GATEWAY_RATE_CALLS_PER_SECOND') ?? 200, 0.001, 1_000_000, false),
    burst,
    publishTimeoutMs: checkRange('--publish-timeout-ms', input.publishTimeoutMs ?? 10_000, 100, 300_000),
    upstreamTimeoutMs: checkRange('--upstream-timeout-ms', input.upstreamTimeoutMs ?? 120_000, 100, 3_600_000),
    episodeTimeoutMs: checkRange('--episode-timeout-ms', input.episodeTimeoutMs ?? 600_000, 100, 7 * 24 * 3_600_000),
    singleInstance: input.singleInstance ?? false,
    allowedHosts: input.allowedHosts === undefined ? (isLoopback(host) ? Object.freeze([]) : null) : input.allowedHosts,
  });
}
