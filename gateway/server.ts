// Binds the gateway's app and runs its episode sweep: every episode idle past the timeout is published as
// truncated (CallRecorder.expire). close() stops accepting, lets in-flight calls finish (their steps are
// published before their answers), then stops the sweep.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { baseUrl, closeOnce, listen } from '../api/server.js';
import { createGatewayApp, type GatewayApp, type GatewayDeps } from './app.js';

export interface GatewayHandle {
  /** e.g. http://127.0.0.1:18090 — the OpenAI base URL is `${url}/v1`. */
  readonly url: string;
  readonly port: number;
  readonly app: GatewayApp;
  close(graceMs?: number): Promise<void>;
}

export async function startGateway(deps: GatewayDeps): Promise<GatewayHandle> {
  const { config } = deps;
  const app = createGatewayApp(deps);
  const server = createServer(app);
  server.headersTimeout = 20_000;
  server.requestTimeout = Math.max(60_000, config.upstreamTimeoutMs + config.publishTimeoutMs + 5_000);
  await listen(server, config.host, config.port, 'TRAJFLOW_GATEWAY_PORT');
  const { port } = server.address() as AddressInfo;
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = setInterval(
    () => {
      sweeping = sweeping.then(() => app.recorder.expire()).catch(() => undefined);
    },
    Math.max(50, Math.min(5_000, Math.floor(config.episodeTimeoutMs / 4))),
  );
  sweep.unref();
  const closeServer = closeOnce(server);
  let closing: Promise<void> | null = null;
  return {
    url: baseUrl(config.host, port),
    port,
    app,
    close(graceMs = 5_000) {
      // The sweep stops once no call is in flight; a sweep already running finishes first.
      closing ??= closeServer(graceMs)
        .finally(() => clearInterval(sweep))
        .finally(() => sweeping);
      return closing;
    },
  };
}
