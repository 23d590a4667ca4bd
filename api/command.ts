// `trajflow dashboard`: serves the HTTP API (ingest of step events, health, reads) until SIGINT or
// SIGTERM, then stops accepting, lets in-flight requests finish, flushes the producer and exits 0.
// Tokens come from TRAJFLOW_DASHBOARD_TOKENS only — a token on the command line would show in `ps`.
import { parseArgs } from 'node:util';
import type { Command } from '../infra/cli/command.js';
import { loadConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { ensureUp } from '../infra/up.js';
import { connectBackbone, shutdownOnSignals } from '../streams/index.js';
import { checkExposure, loadApiConfig, DEFAULT_API_PORT } from './config.js';
import { startHttpServer } from './server.js';
import { createApiServices } from './services.js';

export const dashboardUsage = `trajflow dashboard [--host 127.0.0.1] [--port ${DEFAULT_API_PORT}]

  --host   interface to bind (TRAJFLOW_DASHBOARD_HOST); anything but loopback needs TRAJFLOW_DASHBOARD_TOKENS
  --port   port to bind, 0 for any free one (TRAJFLOW_DASHBOARD_PORT)

  Environment: TRAJFLOW_DASHBOARD_TOKENS (comma-separated bearer tokens, required for writes when set),
  TRAJFLOW_DASHBOARD_MAX_BODY_BYTES, TRAJFLOW_DASHBOARD_MAX_STEPS_PER_REQUEST, TRAJFLOW_DASHBOARD_RATE_STEPS_PER_SECOND,
  TRAJFLOW_DASHBOARD_RATE_BURST, TRAJFLOW_DASHBOARD_PUBLISH_TIMEOUT_MS.

  POST /v1/steps                                  step events as JSON (one, or {"steps": [...]}) or application/vnd.trajflow.avro
  GET  /health                                    Kafka and ClickHouse reachability
  GET  /v1/dead-letters                           ?limit=&sinceMs=&untilMs=&order=&reason=
  GET  /v1/runs                                   runs seen: ?limit=&sinceMs=&untilMs=&runIds= (default: the last 30 days)
  GET  /v1/runs/:runId/curve                      learning curve per rollout batch: ?sinceMs=&untilMs=&bucketMs=&limit=
  GET  /v1/runs/:runId/rollout-stats              ?scope=batch|group&limit=&sinceMs=&untilMs=&order=&batchId=&groupId=
  GET  /v1/runs/:runId/learner-metrics            one row per update: ?limit=&sinceMs=&untilMs=&order=
  GET  /v1/runs/:runId/alerts                     collapse alerts: ?limit=&sinceMs=&untilMs=&order=&kind=&severity=
  GET  /v1/runs/:runId/pass-at-k                  pass@k and pass^k, latest and over time: ?sinceMs=&untilMs=&bucketMs=&limit=
  GET  /v1/runs/:runId/evaluations                held-out evaluations by policy version: ?limit=&sinceMs=&untilMs=&order=
  GET  /v1/runs/:runId/trajectories               ?limit=&success=&outcome=&groupId=&sinceMs=&untilMs=&order=
  GET  /v1/runs/:runId/trajectories/:episodeId    one episode turn by turn (also GET /v1/trajectories/:episodeId?runId=)
  GET  /v1/lag                                    consumer lag of the <prefix>.* consumer groups: ?group=
  GET  /v1/events                                 server-sent events of a run: ?runId=&types=rollout-stats,learner-step,alert,evaluation&sinceMs=

  Ids in paths: letters, digits and . _ - : / (percent-encode / as %2F). Lists return at most 1000 rows
  (truncated: true says there were more); time windows are at most 366 days (dead letters: 90).`;

function portFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,5}$/.test(raw)) throw new ConfigError(`--port needs an integer between 0 and 65535, got '${raw}'`);
  return Number(raw);
}

export async function dashboardCommand(args: string[]): Promise<number> {
  let values: { host?: string; port?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args, options: { host: { type: 'string' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false }));
  } catch (error) {
    console.error(`trajflow dashboard: ${(error as Error).message}\n\nusage: ${dashboardUsage}`);
    return 2;
  }
  if (values.help) {
    console.log(`usage: ${dashboardUsage}`);
    return 0;
  }
  const port = portFlag(values.port);
  const api = loadApiConfig({ ...(values.host === undefined ? {} : { host: values.host }), ...(port === undefined ? {} : { port }) });
  // Refuse before starting anything else.
  checkExposure(api);

  const config = loadConfig();
  await ensureUp(config);
  const backbone = await connectBackbone(config, { clientId: 'trajflow-dashboard' });
  const services = createApiServices(backbone);
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer(api, services);
  } catch (error) {
    await services.close();
    await backbone.close();
    throw error;
  }
  const auth = api.tokens.length > 0 ? `${api.tokens.length} token(s) required for writes` : 'no tokens (loopback only)';
  console.log(`dashboard: API on ${server.url} (${auth}); POST ${server.url}/v1/steps, GET ${server.url}/v1/runs, GET ${server.url}/health; Ctrl-C to stop`);

  // Close in order: the server (no new requests; in-flight ones finish), the probe client, then the
  // backbone (flushes the producer, so every 202 already given stays true). Then return instead of exiting.
  await new Promise<void>((resolve) => {
    const release = shutdownOnSignals(
      [
        server,
        services,
        backbone,
        {
          close: async () => {
            release();
            resolve();
          },
        },
      ],
      { exit: false },
    );
  });
  console.error('dashboard: stopped');
  return 0;
}

/** The entry for bin/main.ts' command table. */
export const dashboardCommandEntry: Command = {
  summary: 'serve the HTTP API: step ingest, health, runs and their metrics, lag, live events',
  usage: dashboardUsage,
  run: dashboardCommand,
};
