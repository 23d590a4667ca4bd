// Errors of the minimal WebSocket layer (RFC 6455).
import { TrajflowError } from '../../../core/errors.js';

/** The opening handshake failed: wrong status, missing or wrong Sec-WebSocket-Accept, timeout. */
export class WebSocketHandshakeError extends TrajflowError {
  readonly status: number | null;

  constructor(url: string, status: number | null, detail: string, cause?: unknown) {
    super('WEBSOCKET_HANDSHAKE', `WebSocket handshake with ${url} failed: ${detail}`, { retriable: status === null || status >= 500, cause });
    this.status = status;
  }
}

/** The peer broke the framing rules (reserved bits, oversize message, bad UTF-8 …). */
export class WebSocketProtocolError extends TrajflowError {
  /** The close code to send (1002 protocol error, 1007 bad data, 1009 too big). */
  readonly closeCode: number;

  constructor(closeCode: number, message: string) {
    super('WEBSOCKET_PROTOCOL', message);
    this.closeCode = closeCode;
  }
}
