// `trajflow gateway`: an OpenAI- and Anthropic-compatible HTTP server in front of trajflow's own policy or any
// OpenAI-compatible model server, recording every answered call as step events (docs/guides/llm-agents.md).
// Runs until SIGINT/SIGTERM, then stops accepting, lets in-flight calls finish and flushes the producer.
import { parseArgs } from 'node:util';
import type { Command } from '../infra/cli/command.js';
import { loadConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { ensureUp } from '../infra/up.js';
import { jsonObjectFlag } from '../infra/cli/flags.js';
import { connectBackbone, shutdownOnSignals } from '../streams/index.js';
import { DEFAULT_GATEWAY_PORT, loadGatewayConfig, type GatewayConfig, type GatewayConfigInput } from './config.js';
import { OpenAIUpstream } from './openai-upstream.js';
import { ownPolicyUpstream } from './own-policy.js';
import { startEpisodeLog } from './episode-log.js';
import { EpisodeBook } from './episodes.js';
import { startGateway } from './server.js';
import type { Upstream } from './upstream.js';

const USAGE = `trajflow gateway [--upstream policy|URL] [--host 127.0.0.1] [--port ${DEFAULT_GATEWAY_PORT}] [--run-id gateway] [--env FrozenLake]
                 [--model-name NAME[,NAME…]] [--temperature 1] [--model JSON] [--policy-version N]
                 [--episode-timeout-ms 600000] [--publish-timeout-ms 10000] [--upstream-timeout-ms 120000]
                 [--calls-per-second 200] [--burst 400] [--single-instance]

  --upstream            policy: trajflow's own policy (the run's current policy version, hot-swapped);
                        URL: an OpenAI-compatible server's /v1 root (vLLM: asked for logprobs and
                        return_tokens_as_token_ids; a call without token ids is refused, nothing recorded)
  --run-id              the run of calls that name none (x-trajflow-run), and whose policy versions the own policy follows
  --env                 the own policy's environment (its action words) and the envName recorded by default
  --model-name          model names served (default trajflow-policy; required with a URL)
  --temperature         the own policy's sampling temperature (the learner's)
  --model               the learner's model settings as JSON (the own policy's version 0), e.g. '{"positionMode":"grid"}'
  --policy-version      the policy version recorded for an external upstream's answers (default 0)
  --episode-timeout-ms  an episode with no call and no finish for this long is published as truncated
  --single-instance     only this gateway records on the topic prefix: calls do not wait for the steps topic to
                        be read up to their arrival (it is still read at start, so a restart continues every
                        episode); off by default, and wrong with several instances behind one address

  Environment: TRAJFLOW_GATEWAY_TOKENS (comma-separated bearer tokens; required off loopback),
  TRAJFLOW_GATEWAY_UPSTREAM_KEY (bearer token sent to an upstream URL), TRAJFLOW_GATEWAY_MAX_BODY_BYTES.

  POST /v1/chat/completions     OpenAI chat completions (n, temperature, max_tokens, stop, logprobs, tools, stream)
  POST /v1/completions          OpenAI text completions
  POST /v1/responses            OpenAI Responses (input items, instructions, function tools, stream)
  POST /v1/messages             Anthropic Messages (system, tool_use / tool_result, stream; x-api-key as the token)
  GET  /v1/models               the model names served
  POST /v1/episodes/{id}/finish {"reward": 1, "success": true} ends an episode, each agent's trajectory of it
                                (also call_rewards by answer id, turn_rewards, truncated)
  GET  /health                  calls answered, steps recorded, episodes open, finished, timed out

  Headers: x-trajflow-run, x-trajflow-group, x-trajflow-episode, x-trajflow-env, x-trajflow-group-size,
  x-trajflow-agent (or the metadata keys trajflow_run, trajflow_group, …, trajflow_agent).`;

const OPTIONS = {
  upstream: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'run-id': { type: 'string' },
  env: { type: 'string' },
  'model-name': { type: 'string' },
  temperature: { type: 'string' },
  model: { type: 'string' },
  'policy-version': { type: 'string' },
  'episode-timeout-ms': { type: 'string' },
  'publish-timeout-ms': { type: 'string' },
  'upstream-timeout-ms': { type: 'string' },
  'calls-per-second': { type: 'string' },
  burst: { type: 'string' },
  'single-instance': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function num(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) throw new ConfigError(`--${name} needs a number, got '${raw}'`);
  return value;
}

/** The gateway's config from its flags (checked by loadGatewayConfig). */
export function configFromFlags(args: string[]): { config: GatewayConfig; policyVersion: number } | 'help' {
  const { values } = parseArgs({ args, options: OPTIONS, allowPositionals: false });
  if (values.help) return 'help';
  const input: { -readonly [K in keyof GatewayConfigInput]: GatewayConfigInput[K] } = {};
  if (values.upstream !== undefined) input.upstream = values.upstream;
  if (values.host !== undefined) input.host = values.host;
  if (values['run-id'] !== undefined) input.runId = values['run-id'];
  if (values.env !== undefined) input.envName = values.env;
  if (values['model-name'] !== undefined) input.models = values['model-name'].split(',').map((m) => m.trim());
  if (values['single-instance'] !== undefined) input.singleInstance = values['single-instance'];
  if (values.model !== undefined) input.model = jsonObjectFlag('model', values.model, { example: '{"positionMode":"grid"}' });
  const numbers = [
    ['port', 'port'],
    ['temperature', 'temperature'],
    ['episode-timeout-ms', 'episodeTimeoutMs'],
    ['publish-timeout-ms', 'publishTimeoutMs'],
    ['upstream-timeout-ms', 'upstreamTimeoutMs'],
    ['calls-per-second', 'callsPerSecond'],
    ['burst', 'burst'],
  ] as const;
  for (const [flag, key] of numbers) {
    const value = num(flag, values[flag]);
    if (value !== undefined) input[key] = value;
  }
  const policyVersion = num('policy-version', values['policy-version']) ?? 0;
  if (!Number.isSafeInteger(policyVersion) || policyVersion < 0) throw new ConfigError(`--policy-version needs a non-negative integer, got ${policyVersion}`);
  return { config: loadGatewayConfig(input), policyVersion };
}

async function run(args: string[]): Promise<number> {
  const parsed = configFromFlags(args);
  if (parsed === 'help') {
    console.log(`usage: ${USAGE}`);
    return 0;
  }
  const { config, policyVersion } = parsed;
  const trajflow = loadConfig();
  await ensureUp(trajflow);
  // No linger: every answer waits for its step's acknowledgement, and calls arriving while a write is in flight
  // go together in the next one anyway (streams/event-producer.ts), so waiting 2 ms to batch only adds 2 ms.
  const backbone = await connectBackbone(trajflow, { clientId: 'trajflow-gateway', producer: { lingerMs: 0 } });
  const closers: Array<{ close(): Promise<void> }> = [];
  let upstream: Upstream;
  if (config.upstream === 'policy') {
    const own = await ownPolicyUpstream(backbone, {
      runId: config.runId,
      envName: config.envName,
      model: config.models[0]!,
      temperature: config.temperature,
      modelSettings: config.model,
    });
    closers.push(own);
    upstream = own.upstream;
  } else {
    const apiKey = process.env.TRAJFLOW_GATEWAY_UPSTREAM_KEY;
    const openai = new OpenAIUpstream({ baseUrl: config.upstream.href, models: config.models, timeoutMs: config.upstreamTimeoutMs, policyVersion, ...(apiKey ? { apiKey } : {}) });
    closers.push(openai);
    upstream = openai;
  }
  // The book of episodes is rebuilt from the steps topic and follows it, so a restart or a second instance
  // continues every open episode where the log says it is; a single instance skips the per-call barrier.
  const book = new EpisodeBook({ timeoutMs: config.episodeTimeoutMs });
  const log = await startEpisodeLog(backbone.kafka, backbone.codec, book, {
    topic: backbone.steps.topic,
    lookbackMs: 2 * config.episodeTimeoutMs,
    catchUpTimeoutMs: config.publishTimeoutMs,
  });
  closers.push(log);
  const server = await startGateway({ config, upstream, steps: backbone.steps, book, ...(config.singleInstance ? {} : { sync: log }) });
  console.log(
    `gateway: OpenAI base URL ${server.url}/v1 (upstream ${upstream.name}, models ${upstream.models().join(', ')}, run ${config.runId}; ${book.openCount} open episodes from the log); Ctrl-C to stop`,
  );
  await new Promise<void>((resolve) => {
    const stopped = (): void => {
      release();
      resolve();
    };
    const release = shutdownOnSignals([server, ...closers, backbone, { close: async () => stopped() }], { exit: false });
  });
  console.error('gateway: stopped');
  return 0;
}

export const gatewayCommand: Command = {
  summary: 'serve OpenAI- and Anthropic-compatible APIs in front of the own policy or a model server, recording every call as step events',
  usage: USAGE,
  run,
};
