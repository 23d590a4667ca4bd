// Binds the API to its host and port and hands back its URL and a close(). It refuses to start when the
// host is reachable from other machines and no token is configured (checkExposure), and turns the usual
// bind failures (port taken, address not on this machine) into ConfigErrors that say what to change.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../core/errors.js';
import { createApp, type ApiApp, type ApiDeps } from './app.js';
import { checkExposure, type ApiConfig } from './config.js';

export interface HttpServerHandle {
  /** e.g. http://127.0.0.1:18080 */
  readonly url: string;
  readonly port: number;
  readonly app: ApiApp;
  /** Stops accepting, ends the event streams, lets in-flight requests finish (up to graceMs, default 5 s), then closes every socket. */
  close(graceMs?: number): Promise<void>;
}

/** Binds `server`; a taken port, a foreign address or a privileged port is a ConfigError naming what to change (`portSetting`: the variable that sets the port). */
export function listen(server: Server, host: string, port: number, portSetting = 'TRAJFLOW_DASHBOARD_PORT'): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') reject(new ConfigError(`port ${port} on ${host} is already in use: pass --port <another> (or set ${portSetting}), or stop what uses it.`));
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

export async function startHttpServer(config: ApiConfig, services: Omit<ApiDeps, 'config'>): Promise<HttpServerHandle> {
  checkExposure(config);
  const app = createApp({ ...services, config });
  const server = createServer(app);
  // Slow clients must not hold sockets forever (slowloris): headers within 20 s, a whole request within 60 s.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await listen(server, config.host, config.port);
  const { port } = server.address() as AddressInfo;
  return {
    url: baseUrl(config.host, port),
    port,
    app,
    // Event streams never finish on their own: end them, or they would hold the close for graceMs.
    close: closeOnce(server, () => app.closeStreams()),
  };
}

/** The server's base URL (an IPv6 host in brackets). */
export function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/**
 * A close() for `server`, the same promise however often it is called: stops accepting, runs `beforeClose`, lets
 * in-flight requests finish (up to graceMs, default 5 s), then closes every socket.
 */
export function closeOnce(server: Server, beforeClose: () => void = () => undefined): (graceMs?: number) => Promise<void> {
  let closing: Promise<void> | null = null;
  return (graceMs = 5000) => {
    closing ??= new Promise<void>((resolve, reject) => {
      beforeClose();
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
  };
}
