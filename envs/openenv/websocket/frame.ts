// RFC 6455 framing: encoding one frame, and decoding frames out of a byte stream that arrives in
// arbitrary chunks. Client-to-server frames are masked, server-to-client frames are not (§5.1);
// the decoder accepts both, the caller decides what to send.
import { randomBytes } from 'node:crypto';
import { WebSocketProtocolError } from './errors.js';

export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

export interface Frame {
  readonly fin: boolean;
  readonly opcode: number;
  readonly payload: Buffer;
}

export function encodeFrame(opcode: number, payload: Buffer, mask: boolean): Buffer {
  const length = payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const out = Buffer.allocUnsafe(2 + lengthBytes + (mask ? 4 : 0) + length);
  out[0] = 0x80 | opcode; // FIN: we never fragment what we send
  let offset = 2;
  if (lengthBytes === 0) out[1] = length;
  else if (lengthBytes === 2) {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
    offset = 4;
  } else {
    out[1] = 127;
    out.writeBigUInt64BE(BigInt(length), 2);
    offset = 10;
  }
  if (!mask) {
    payload.copy(out, offset);
    return out;
  }
  out[1] = out[1]! | 0x80;
  const key = randomBytes(4);
  key.copy(out, offset);
  offset += 4;
  for (let i = 0; i < length; i++) out[offset + i] = payload[i]! ^ key[i & 3]!;
  return out;
}

/** Cuts frames out of the incoming bytes; keeps an incomplete frame's bytes for the next chunk. */
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(private readonly maxPayloadBytes: number) {}

  push(chunk: Buffer): Frame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: Frame[] = [];
    for (;;) {
      const frame = this.next();
      if (frame === null) return frames;
      frames.push(frame);
    }
  }

  private next(): Frame | null {
    const buf = this.buffer;
    if (buf.length < 2) return null;
    const first = buf[0]!;
    const second = buf[1]!;
    if ((first & 0x70) !== 0) throw new WebSocketProtocolError(1002, 'reserved bits set (no extension was negotiated)');
    const opcode = first & 0x0f;
    const masked = (second & 0x80) !== 0;
    let length = second & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (buf.length < 4) return null;
      length = buf.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (buf.length < 10) return null;
      const big = buf.readBigUInt64BE(2);
      if (big > BigInt(this.maxPayloadBytes)) throw new WebSocketProtocolError(1009, `frame of ${big} bytes is over the ${this.maxPayloadBytes}-byte limit`);
      length = Number(big);
      offset = 10;
    }
    if (length > this.maxPayloadBytes) throw new WebSocketProtocolError(1009, `frame of ${length} bytes is over the ${this.maxPayloadBytes}-byte limit`);
    if (opcode >= 0x8 && (length > 125 || (first & 0x80) === 0)) throw new WebSocketProtocolError(1002, 'control frame fragmented or longer than 125 bytes');
    const keyOffset = offset;
    if (masked) offset += 4;
    if (buf.length < offset + length) return null;
    const payload = Buffer.from(buf.subarray(offset, offset + length));
    if (masked) for (let i = 0; i < length; i++) payload[i] = payload[i]! ^ buf[keyOffset + (i & 3)]!;
    this.buffer = buf.subarray(offset + length);
    return { fin: (first & 0x80) !== 0, opcode, payload };
  }
}

/** The payload of a close frame: a 2-byte code and a UTF-8 reason (both optional). */
export function encodeClosePayload(code: number, reason: string): Buffer {
  const text = Buffer.from(reason, 'utf8').subarray(0, 123);
  const out = Buffer.alloc(2 + text.length);
  out.writeUInt16BE(code, 0);
  text.copy(out, 2);
  return out;
}

export function decodeClosePayload(payload: Buffer): { code: number; reason: string } {
  if (payload.length < 2) return { code: 1005, reason: '' }; // 1005: no status code was present
  return { code: payload.readUInt16BE(0), reason: payload.subarray(2).toString('utf8') };
}
