// Binds the gateway's app and runs its episode sweep: every episode idle past the timeout is published as
// truncated (CallRecorder.expire). close() stops accepting, lets in-flight calls finish (their steps are
// published before their answers), then stops the sweep.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../core/errors.js';
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new ConfigError(`port ${config.port} on ${config.host} is already in use: pass --port <another> (or 0 for any free one).`) : error),
    );
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = setInterval(
    () => {
      sweeping = sweeping.then(() => app.recorder.expire()).catch(() => undefined);
    },
    Math.max(50, Math.min(5_000, Math.floor(config.episodeTimeoutMs / 4))),
  );
  sweep.unref();
  const hostPart = config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${hostPart}:${port}`,
    port,
    app,
    close(graceMs = 5_000) {
      closing ??= new Promise<void>((resolve, reject) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close((error) => {
          clearTimeout(force);
          clearInterval(sweep);
          void sweeping.then(() => (error ? reject(error) : resolve()));
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
