// The one error middleware: every error a route throws (or express' body reader raises) becomes a
// problem-details response. Known client errors keep their message; anything else is a 500 whose body
// says only that it happened and an id to find it in the server log — the stack, the message and the
// cause stay in the log, never in a response.
import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { HttpProblem, PROBLEM_CONTENT_TYPE, problem, problemTypes, type ProblemDetails } from '../core/problem.js';

export type Logger = (line: string, error?: unknown) => void;

export const consoleLogger: Logger = (line, error) => {
  if (error === undefined) console.error(line);
  else console.error(line, error);
};

/** http-errors raised by express' body parsers carry a `type`; map the ones a client can cause. */
function fromBodyParser(error: { type?: unknown; status?: unknown; limit?: unknown; length?: unknown }): HttpProblem | undefined {
  switch (error.type) {
    case 'entity.too.large':
      return new HttpProblem(problemTypes.tooLarge, `the body is larger than the ${String(error.limit)}-byte limit`, { limitBytes: Number(error.limit) });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpProblem(problemTypes.unsupportedMediaType, 'the body uses a content encoding or charset this server does not read (use identity, gzip, deflate or br; UTF-8)');
    case 'entity.parse.failed':
      // express.json's SyntaxError: the client's bad JSON, not the server's fault (it was a 500).
      return new HttpProblem(problemTypes.invalidBody, 'the body is not valid JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new HttpProblem(problemTypes.invalidBody, 'the body ended before its declared Content-Length');
    default:
      return undefined;
  }
}

export function problemErrorHandler(log: Logger = consoleLogger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      // Too late for a problem body; express closes the connection.
      next(error);
      return;
    }
    const known =
      error instanceof HttpProblem
        ? error
        : error instanceof URIError
          ? // express could not percent-decode a path parameter (e.g. a lone %E2).
            new HttpProblem(problemTypes.invalidPath, 'a path parameter is not valid percent-encoded UTF-8')
          : typeof error === 'object' && error !== null
            ? fromBodyParser(error)
            : undefined;
    if (known) {
      if (known.status >= 500) log(`${req.method} ${req.path}: ${known.status} ${known.message}`, (error as Error).cause);
      sendProblem(res, known.problem, known.headers);
      return;
    }
    const errorId = randomUUID();
    log(`${req.method} ${req.path}: unexpected error ${errorId}`, error);
    sendProblem(res, problem(problemTypes.internal, `an unexpected error occurred; the server log has it under id ${errorId}`, { errorId }));
  };
}

/** The last route: anything unmatched is a 404 problem. */
export const notFound: RequestHandler = (req, res) => {
  sendProblem(res, problem(problemTypes.notFound, `no resource at ${req.method} ${req.path}`));
};

/** For a known path with the wrong method: 405 with Allow. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, res) => {
    sendProblem(res, problem(problemTypes.methodNotAllowed, `${req.method} is not allowed here; use ${allowed.join(' or ')}`), { Allow: allowed.join(', ') });
  };
}

export function sendProblem(res: Response, body: ProblemDetails, headers: Readonly<Record<string, string>> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}
