// One OpenEnv session: requests over one WebSocket, each matched to the next reply (the server
// answers in order, one reply per request). A request that times out closes the session, since its
// late reply would otherwise be taken as the answer to the next request.
import { OpenEnvConnectionError, OpenEnvProtocolError, OpenEnvTimeoutError } from './errors.js';
import { parseServerMessage, type ClientMessage, type ServerMessage } from './protocol.js';
import type { SocketClosed, TextSocket } from './websocket/index.js';

interface Pending {
  readonly what: string;
  readonly resolve: (message: ServerMessage) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class OpenEnvSession {
  private readonly pending: Pending[] = [];
  private closedWith: SocketClosed | null = null;
  private failure: Error | null = null;
  private readonly closed: Promise<SocketClosed>;

  constructor(
    private readonly socket: TextSocket,
    private readonly url: string,
    private readonly requestTimeoutMs: number,
  ) {
    socket.onText((text) => this.receive(text));
    this.closed = new Promise((resolve) => {
      socket.onClose((closed) => {
        this.closedWith = closed;
        const error =
          this.failure ?? new OpenEnvConnectionError(`the OpenEnv WebSocket ${url} closed (${closed.code}${closed.reason ? ` ${closed.reason}` : ''}) while a reply was awaited`);
        for (const pending of this.pending.splice(0)) {
          clearTimeout(pending.timer);
          pending.reject(error);
        }
        resolve(closed);
      });
    });
  }

  get isOpen(): boolean {
    return this.closedWith === null && this.failure === null && this.socket.isOpen;
  }

  /** Sends a message and resolves with its reply (an error reply included: the caller decides). */
  request(message: Exclude<ClientMessage, { type: 'close' }>): Promise<ServerMessage> {
    if (!this.isOpen) {
      return Promise.reject(this.failure ?? new OpenEnvConnectionError(`the OpenEnv WebSocket ${this.url} is closed`));
    }
    return new Promise<ServerMessage>((resolve, reject) => {
      const timer = setTimeout(() => this.abort(new OpenEnvTimeoutError(message.type, this.requestTimeoutMs), 1000), this.requestTimeoutMs);
      this.pending.push({ what: message.type, resolve, reject, timer });
      try {
        this.socket.send(JSON.stringify(message));
      } catch (error) {
        this.abort(new OpenEnvConnectionError(`cannot send ${message.type} to ${this.url}`, error), 1000);
      }
    });
  }

  /** Sends {"type":"close"} and waits (up to the request timeout) for the server to close the socket. */
  async close(): Promise<void> {
    if (this.socket.isOpen) {
      try {
        this.socket.send(JSON.stringify({ type: 'close' } satisfies ClientMessage));
      } catch {
        // already closing: nothing to tell the server
      }
    }
    const timer = setTimeout(() => this.socket.close(1000, 'client closed'), this.requestTimeoutMs);
    await this.closed;
    clearTimeout(timer);
  }

  private receive(text: string): void {
    const pending = this.pending.shift();
    if (pending === undefined) {
      this.abort(new OpenEnvProtocolError(`the server sent a message nobody asked for: ${text.slice(0, 200)}`), 1002);
      return;
    }
    clearTimeout(pending.timer);
    try {
      pending.resolve(parseServerMessage(text));
    } catch (error) {
      pending.reject(error as Error);
    }
  }

  /** Fails every waiting request with `error` and drops the connection. */
  private abort(error: Error, closeCode: number): void {
    this.failure ??= error;
    for (const pending of this.pending.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.socket.close(closeCode, error.message.slice(0, 100));
  }
}
