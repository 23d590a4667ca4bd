// Binds the API to its host and port and hands back its URL and a close(). It refuses to start when the
// host is reachable from other machines and no token is configured (checkExposure), and turns the usual
// bind failures (port taken, address not on this machine) into ConfigErrors that say what to change.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../core/errors.js';
import { createApp, type ApiApp, type ApiDeps } from './app.js';
import { checkExposure, type DashboardConfig } from './config.js';

export interface HttpServerHandle {
  /** e.g. http://127.0.0.1:18080 */
  readonly url: string;
  readonly port: number;
  readonly app: ApiApp;
  /** Stops accepting, ends the event streams, lets in-flight requests finish (up to graceMs, default 5 s), then closes every socket. */
  close(graceMs?: number): Promise<void>;
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE')
        reject(new ConfigError(`port ${port} on ${host} is already in use: pass --port <another> (or set TRAJFLOW_DASHBOARD_PORT), or stop what uses it.`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
        reject(new ConfigError(`cannot bind to ${host}: it is not an address of this machine. Pass --host 127.0.0.1 or one of this machine's addresses.`));
      else if (error.code === 'EACCES') reject(new ConfigError(`not allowed to bind port ${port}: use a port of 1024 or above.`));
      else reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

export async function startHttpServer(config: DashboardConfig, services: Omit<ApiDeps, 'config'>): Promise<HttpServerHandle> {
  checkExposure(config);
  const app = createApp({ ...services, config });
  const server = createServer(app);
  // Slow clients must not hold sockets forever (slowloris): headers within 20 s, a whole request within 60 s.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await listen(server, config.host, config.port);
  const { port } = server.address() as AddressInfo;
  const hostPart = config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${hostPart}:${port}`,
    port,
    app,
    close(graceMs = 5000) {
      closing ??= new Promise<void>((resolve, reject) => {
        // Event streams never finish on their own: end them, or they would hold the close for graceMs.
        app.closeStreams();
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close((error) => {
          clearTimeout(force);
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
