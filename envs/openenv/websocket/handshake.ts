// The opening handshake's key check (RFC 6455 §4.2.2): the accept value is
// base64(SHA-1(key + the protocol's GUID)), so both sides know the other speaks WebSocket.
import { createHash, randomBytes } from 'node:crypto';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export function newClientKey(): string {
  return randomBytes(16).toString('base64');
}

export function acceptValueFor(clientKey: string): string {
  return createHash('sha1')
    .update(clientKey + GUID)
    .digest('base64');
}
