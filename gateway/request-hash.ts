// A call's request as a short hash, recorded on its step (info.requestHash): a client that retries a call whose
// answer it never got sends the same request again, and the same hash right after a turn marks that turn an
// orphan (episodes.ts). Pure: the endpoint and the parsed request (streamed or not alike), whose fields keep the
// order they were read in.
import { createHash } from 'node:crypto';
import type { GatewayRequest } from './chat-request.js';

export function requestHash(request: Pick<GatewayRequest, 'endpoint' | 'upstream'>): string {
  const text = JSON.stringify([request.endpoint, request.upstream]);
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}
