// A body whose declared length (Content-Length) is over the limit is refused with 413 before any of it is
// read. express' body readers check the declared length too, but then read the whole body off the socket
// before answering (so that the connection can be reused): a client declaring 10 GB held a request, and the
// server's reading, until the request timeout. Here the answer goes at once, with `Connection: close`, so the
// server stops reading when the answer is sent. Bodies without a Content-Length (chunked) are still limited
// by the body reader as they arrive.
import type { RequestHandler } from 'express';
import { HttpProblem, problemTypes } from '../core/problem.js';

export function declaredLengthLimit(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = req.get('content-length');
    // Node has checked the header is one decimal number (or refused the request); compare as a number.
    if (declared !== undefined && Number(declared) > limitBytes) {
      res.setHeader('Connection', 'close');
      throw new HttpProblem(problemTypes.tooLarge, `the body is declared as ${declared} bytes (Content-Length), over the ${limitBytes}-byte limit`, { limitBytes });
    }
    next();
  };
}
