// Bearer-token authentication (RFC 6750 header form only: tokens never go in URLs, where logs keep them).
// No Authorization header (or another scheme) → 401; a token that is not configured → 403; both carry
// `WWW-Authenticate: Bearer`. Tokens are compared through their SHA-256 digests with timingSafeEqual, so
// the comparison time says nothing about how much of a guess was right. The accepted token's id (its
// position in the config, never the token itself) is left on res.locals for the rate limiter and logs.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpProblem, problemTypes } from '../core/problem.js';

const REALM = 'trajflow';

/** Who made the request: `token:<n>` (1-based position in the configured list) or `anonymous`. */
export interface Caller {
  readonly id: string;
}

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Returns the caller id for an Authorization header value, or throws the 401/403 HttpProblem. */
export function authenticate(tokens: readonly string[], header: string | undefined): Caller {
  const match = header === undefined ? null : /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (!match) {
    throw new HttpProblem(
      problemTypes.unauthenticated,
      header === undefined ? 'this endpoint needs an `Authorization: Bearer <token>` header' : 'the Authorization header must be `Bearer <token>` (other schemes are not accepted)',
      {},
      { 'WWW-Authenticate': `Bearer realm="${REALM}"` },
    );
  }
  const offered = digest(match[1]!);
  let found = -1;
  // Compare against every token (no early exit), so timing does not reveal which one matched.
  for (const [i, token] of tokens.entries()) if (timingSafeEqual(offered, digest(token)) && found === -1) found = i;
  if (found === -1) {
    throw new HttpProblem(
      problemTypes.forbidden,
      'the bearer token is not one this server accepts',
      {},
      {
        'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"`,
      },
    );
  }
  return { id: `token:${found + 1}` };
}

/**
 * Requires a configured token when `required` is true; otherwise lets the request through as anonymous
 * (no tokens configured, or a read on loopback). Sets res.locals.caller either way.
 *
 * A request that offers a token is checked even where none is required, whenever tokens are configured: a
 * wrong token is a 403, not silently ignored, so a client (or the dashboard page) holding a stale or
 * mistyped token learns it on loopback too, before the same call fails on a server bound elsewhere.
 */
export function bearerAuth(tokens: readonly string[], required: boolean): RequestHandler {
  return (req, res, next) => {
    const offered = req.get('authorization');
    if (!required && offered !== undefined && tokens.length > 0) {
      res.locals.caller = authenticate(tokens, offered);
      next();
      return;
    }
    if (!required) {
      res.locals.caller = { id: `anonymous:${req.socket.remoteAddress ?? 'unknown'}` } satisfies Caller;
      next();
      return;
    }
    res.locals.caller = authenticate(tokens, req.get('authorization'));
    next();
  };
}

export function callerOf(locals: Record<string, unknown>): Caller {
  return (locals.caller as Caller | undefined) ?? { id: 'anonymous:unknown' };
}
