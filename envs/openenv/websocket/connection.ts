// A WebSocket connection over an upgraded TCP socket, for either side (RFC 6455): text messages
// (fragments reassembled), ping answered with pong, the closing handshake, and a drop when the peer
// breaks the rules. Binary messages are not part of the OpenEnv protocol and close the connection (1003).
import type { Duplex } from 'node:stream';
import { WebSocketProtocolError } from './errors.js';
import { FrameDecoder, OPCODE, decodeClosePayload, encodeClosePayload, encodeFrame, type Frame } from './frame.js';
import type { SocketClosed, TextSocket } from './text-socket.js';

export interface ConnectionOptions {
  /** True on the client side: client frames must be masked (§5.3). */
  readonly mask: boolean;
  /** Largest message accepted (after reassembly). Default 16 MiB: observations may carry images as JSON. */
  readonly maxMessageBytes?: number;
  /** Bytes that arrived together with the handshake (node's `head`). */
  readonly head?: Buffer;
  /** How long to wait for the peer's close frame before dropping the connection. Default 2 000 ms. */
  readonly closeTimeoutMs?: number;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

export class WebSocketConnection implements TextSocket {
  private readonly decoder: FrameDecoder;
  private readonly textListeners: Array<(text: string) => void> = [];
  private readonly closeListeners: Array<(closed: SocketClosed) => void> = [];
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private fragmentOpcode: number | null = null;
  private closeSent = false;
  private peerClose: SocketClosed | null = null;
  private closed: SocketClosed | null = null;
  private closeTimer: NodeJS.Timeout | null = null;
  private readonly maxMessageBytes: number;
  private readonly closeTimeoutMs: number;

  constructor(
    private readonly socket: Duplex,
    private readonly options: ConnectionOptions,
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 2000;
    this.decoder = new FrameDecoder(this.maxMessageBytes);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => socket.destroy()); // reported through 'close' as a drop (1006)
    socket.on('close', () => this.finish(this.peerClose ?? { code: 1006, reason: 'connection dropped' }));
    if (options.head !== undefined && options.head.length > 0) queueMicrotask(() => this.receive(options.head!));
  }

  get isOpen(): boolean {
    return !this.closeSent && this.closed === null;
  }

  send(text: string): void {
    if (!this.isOpen) throw new WebSocketProtocolError(1006, 'cannot send: the WebSocket is closed or closing');
    this.socket.write(encodeFrame(OPCODE.text, Buffer.from(text, 'utf8'), this.options.mask));
  }

  close(code = 1000, reason = ''): void {
    if (this.closed !== null) return;
    if (!this.closeSent) {
      this.closeSent = true;
      this.socket.write(encodeFrame(OPCODE.close, encodeClosePayload(code, reason), this.options.mask));
    }
    if (this.peerClose !== null) this.socket.end();
    // A peer that never answers the close frame must not keep the socket (and the process) alive.
    this.closeTimer ??= setTimeout(() => this.socket.destroy(), this.closeTimeoutMs);
    this.closeTimer.unref();
  }

  onText(listener: (text: string) => void): void {
    this.textListeners.push(listener);
  }

  onClose(listener: (closed: SocketClosed) => void): void {
    if (this.closed !== null) listener(this.closed);
    else this.closeListeners.push(listener);
  }

  private receive(chunk: Buffer): void {
    if (this.closed !== null) return;
    try {
      for (const frame of this.decoder.push(chunk)) this.handle(frame);
    } catch (error) {
      const code = error instanceof WebSocketProtocolError ? error.closeCode : 1011;
      this.fail(code, error instanceof Error ? error.message : String(error));
    }
  }

  private handle(frame: Frame): void {
    switch (frame.opcode) {
      case OPCODE.ping:
        if (!this.closeSent) this.socket.write(encodeFrame(OPCODE.pong, frame.payload, this.options.mask));
        return;
      case OPCODE.pong:
        return;
      case OPCODE.close:
        this.peerClose = decodeClosePayload(frame.payload);
        if (!this.closeSent) this.close(this.peerClose.code === 1005 ? 1000 : this.peerClose.code);
        this.socket.end();
        return;
      case OPCODE.text:
      case OPCODE.binary:
        if (this.fragmentOpcode !== null) throw new WebSocketProtocolError(1002, 'new message started inside a fragmented one');
        this.fragmentOpcode = frame.opcode;
        this.append(frame);
        return;
      case OPCODE.continuation:
        if (this.fragmentOpcode === null) throw new WebSocketProtocolError(1002, 'continuation frame without a message');
        this.append(frame);
        return;
      default:
        throw new WebSocketProtocolError(1002, `unknown opcode ${frame.opcode}`);
    }
  }

  private append(frame: Frame): void {
    this.fragmentBytes += frame.payload.length;
    if (this.fragmentBytes > this.maxMessageBytes) throw new WebSocketProtocolError(1009, `message over the ${this.maxMessageBytes}-byte limit`);
    this.fragments.push(frame.payload);
    if (!frame.fin) return;
    const opcode = this.fragmentOpcode;
    const payload = this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments);
    this.fragments = [];
    this.fragmentBytes = 0;
    this.fragmentOpcode = null;
    if (opcode === OPCODE.binary) throw new WebSocketProtocolError(1003, 'binary messages are not supported (OpenEnv speaks JSON text)');
    let text: string;
    try {
      text = fatalUtf8.decode(payload);
    } catch {
      throw new WebSocketProtocolError(1007, 'text message is not valid UTF-8');
    }
    for (const listener of this.textListeners) listener(text);
  }

  private fail(code: number, reason: string): void {
    if (!this.closeSent) {
      this.closeSent = true;
      this.socket.write(encodeFrame(OPCODE.close, encodeClosePayload(code, reason), this.options.mask));
    }
    this.peerClose ??= { code, reason };
    this.socket.end();
    this.socket.destroy();
  }

  private finish(closed: SocketClosed): void {
    if (this.closed !== null) return;
    this.closed = closed;
    this.closeSent = true;
    if (this.closeTimer !== null) clearTimeout(this.closeTimer);
    for (const listener of this.closeListeners.splice(0)) listener(closed);
  }
}
