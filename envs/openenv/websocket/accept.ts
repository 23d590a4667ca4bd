// The server side of the opening handshake, for node:http's 'upgrade' event: answers 101 and wraps
// the socket. Used by the test server; also lets anyone serve an OpenEnv-compatible /ws from Node.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketConnection } from './connection.js';
import { acceptValueFor } from './handshake.js';
import type { TextSocket } from './text-socket.js';

/** Completes the handshake and returns the connection, or answers 400 and returns null. */
export function acceptWebSocket(request: IncomingMessage, socket: Duplex, head: Buffer, maxMessageBytes?: number): TextSocket | null {
  const key = request.headers['sec-websocket-key'];
  const upgrade = request.headers.upgrade?.toLowerCase();
  if (typeof key !== 'string' || upgrade !== 'websocket' || request.headers['sec-websocket-version'] !== '13') {
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return null;
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptValueFor(key)}\r\n\r\n`);
  return new WebSocketConnection(socket, { mask: false, head, maxMessageBytes });
}
