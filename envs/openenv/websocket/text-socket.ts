// The one thing the OpenEnv adapter needs from a WebSocket: send text, receive text, close. The
// built-in implementation is connection.ts; any other client (the `ws` package, Node 22's global
// WebSocket) can be wrapped into this interface and passed as the adapter's `openSocket`.

export interface SocketClosed {
  /** The close code the peer sent (1000 normal), or 1006 when the connection dropped without one. */
  readonly code: number;
  readonly reason: string;
}

export interface TextSocket {
  /** Sends one text message. Throws when the socket is no longer open. */
  send(text: string): void;
  /** Starts the closing handshake (or drops the connection if the peer never answers). */
  close(code?: number, reason?: string): void;
  onText(listener: (text: string) => void): void;
  /** Called once, when the connection is gone (after a handshake or a drop). */
  onClose(listener: (closed: SocketClosed) => void): void;
  readonly isOpen: boolean;
}

/** Opens a socket to a ws:// or wss:// URL. */
export type OpenSocket = (url: string, options: { timeoutMs: number }) => Promise<TextSocket>;
