// A minimal RFC 6455 WebSocket (text messages only) for the OpenEnv adapter and its test server.
export { openWebSocket, type OpenWebSocketOptions } from './client.js';
export { acceptWebSocket } from './accept.js';
export { WebSocketConnection, type ConnectionOptions } from './connection.js';
export { WebSocketHandshakeError, WebSocketProtocolError } from './errors.js';
export type { OpenSocket, SocketClosed, TextSocket } from './text-socket.js';
