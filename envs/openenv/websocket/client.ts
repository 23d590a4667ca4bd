// Opens a WebSocket as a client with node:http(s) (Node 20 has no stable WebSocket client; it is
// global only from Node 22). Plain ws:// and wss://, no extensions, no subprotocols — what OpenEnv's
// /ws endpoint needs.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { WebSocketConnection } from './connection.js';
import { WebSocketHandshakeError } from './errors.js';
import { acceptValueFor, newClientKey } from './handshake.js';
import type { TextSocket } from './text-socket.js';

export interface OpenWebSocketOptions {
  /** The whole handshake must finish within this time. */
  readonly timeoutMs: number;
  readonly maxMessageBytes?: number;
}

export function openWebSocket(url: string, options: OpenWebSocketOptions): Promise<TextSocket> {
  const target = new URL(url);
  if (target.protocol !== 'ws:' && target.protocol !== 'wss:') {
    return Promise.reject(new WebSocketHandshakeError(url, null, `the URL must start with ws:// or wss://, got ${target.protocol}`));
  }
  const key = newClientKey();
  const request = (target.protocol === 'wss:' ? httpsRequest : httpRequest)({
    hostname: target.hostname.replace(/^\[|\]$/g, ''), // IPv6 literals come bracketed in URLs
    port: target.port === '' ? undefined : Number(target.port),
    path: `${target.pathname}${target.search}`,
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Key': key,
      'Sec-WebSocket-Version': '13',
    },
  });

  return new Promise<TextSocket>((resolve, reject) => {
    const timer = setTimeout(() => {
      request.destroy();
      reject(new WebSocketHandshakeError(url, null, `no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const settle = (error: WebSocketHandshakeError | null, socket?: TextSocket): void => {
      clearTimeout(timer);
      if (error !== null) reject(error);
      else resolve(socket!);
    };

    request.on('upgrade', (response: IncomingMessage, socket: Socket, head: Buffer) => {
      if (response.headers['sec-websocket-accept'] !== acceptValueFor(key)) {
        socket.destroy();
        settle(new WebSocketHandshakeError(url, response.statusCode ?? null, 'wrong or missing Sec-WebSocket-Accept'));
        return;
      }
      socket.setNoDelay(true); // one small JSON message per request: do not let Nagle hold it
      settle(null, new WebSocketConnection(socket, { mask: true, head, maxMessageBytes: options.maxMessageBytes }));
    });
    // A server that does not upgrade answers with an ordinary response (404 without /ws, 403 …).
    request.on('response', (response: IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        if (body.length < 500) body += chunk;
      });
      response.on('end', () => settle(new WebSocketHandshakeError(url, response.statusCode ?? null, `HTTP ${response.statusCode}: ${body.slice(0, 500)}`)));
    });
    request.on('error', (error) => settle(new WebSocketHandshakeError(url, null, error.message, error)));
    request.end();
  });
}
