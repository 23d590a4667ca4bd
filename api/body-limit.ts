// A body over the limit is refused with 413 as soon as that is known, with `Connection: close`, so the server
// stops reading when the answer is sent:
//   * declared (Content-Length) over the limit: before any of it is read;
//   * sent without a length (Transfer-Encoding: chunked): as soon as the bytes received pass the limit.
// express' body readers (body-parser's read) refuse both too, but only after reading the whole body off the
// socket (so that the connection can be reused): a client declaring 10 GB, or streaming chunks without end,
// held the request, and the server's reading, until the request timeout. express.raw still reads the body
// (it decompresses, and limits the decompressed size); this check counts the bytes on the wire in front of it.
import type { Socket } from 'node:net';
import express, { type NextFunction, type RequestHandler } from 'express';
import { HttpProblem, problem, problemTypes } from '../core/problem.js';
import { sendProblem } from './error-handler.js';

/** The body as a Buffer in req.body (any media type: the route checked it), refused with 413 past `limitBytes`. */
export function rawBody(limitBytes: number): RequestHandler {
  const reader = express.raw({ type: () => true, limit: limitBytes });
  return (req, res, next) => {
    const declared = req.get('content-length');
    if (declared !== undefined) {
      // Node has checked the header is one decimal number (or refused the request); compare as a number.
      if (Number(declared) > limitBytes) {
        res.setHeader('Connection', 'close');
        lingerOnClose(res.socket);
        throw new HttpProblem(problemTypes.tooLarge, `the body is declared as ${declared} bytes (Content-Length), over the ${limitBytes}-byte limit`, { limitBytes });
      }
      // Node reads no more than the declared length: the body reader's limit is enough.
      reader(req, res, next);
      return;
    }
    let received = 0;
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= limitBytes) return;
      req.off('data', count);
      // The body reader sees the same bytes and fails too, but only once the request ended (afterAnswer).
      if (!res.headersSent) {
        res.setHeader('Connection', 'close');
        lingerOnClose(res.socket);
        sendProblem(res, problem(problemTypes.tooLarge, `the body (sent without a Content-Length) passed the ${limitBytes}-byte limit after ${received} bytes`, { limitBytes }));
      }
    };
    // Registered before the body reader's listener (attached in this same tick, before any data event), so
    // both see every chunk.
    req.on('data', count);
    reader(req, res, afterAnswer(res, next));
  };
}

/** Passes the body reader's outcome on, unless this check has answered already (its error is then the same refusal). */
function afterAnswer(res: { readonly headersSent: boolean }, next: NextFunction): NextFunction {
  return ((error?: unknown) => {
    if (!res.headersSent) next(error);
  }) as NextFunction;
}

/** How long the connection stays half-open after a refusal (Go's net/http waits 500 ms: rstAvoidanceDelay). */
const LINGER_MS = 500;

/**
 * Node closes a `Connection: close` response's socket as soon as the answer is written. While the client is
 * still sending, the bytes that arrive after that make the kernel answer with a reset, and a reset can discard
 * the answer before the client read it (it saw only EPIPE). So, for this socket: the answer, then FIN (no more
 * from the server), and only LINGER_MS later the socket is destroyed; what the client sends meanwhile is read
 * and dropped (the request stream keeps flowing).
 */
function lingerOnClose(socket: Socket | null): void {
  if (socket === null) return;
  socket.destroySoon = () => {
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
