// The gateway's error middleware: every failure becomes an OpenAI-shaped error body, or Anthropic's shape on
// POST /v1/messages (anthropic-error.ts). OpenAIErrors keep their fields; problem details raised by the shared
// API modules (auth, body limit, host check) keep their status and message and get the matching OpenAI type;
// express' body-reader errors become 400/413; anything else is a 500 whose body holds only an id to find it in the log.
import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { HttpProblem } from '../core/problem.js';
import type { Logger } from '../api/error-handler.js';
import { anthropicErrorBody } from './anthropic-error.js';
import { OpenAIError, typeOfStatus } from './openai-error.js';

/** The path (and the paths under it) whose errors are in Anthropic's shape. */
export const ANTHROPIC_PATH = '/v1/messages';

/** Sends the error in the shape of the API the request was made to. */
export function sendError(req: Request, res: Response, error: OpenAIError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const anthropic = req.path === ANTHROPIC_PATH || req.path.startsWith(`${ANTHROPIC_PATH}/`);
  res.status(error.status).json(anthropic ? anthropicErrorBody(error) : error.body);
}

function fromBodyReader(error: { type?: unknown; limit?: unknown }): OpenAIError | undefined {
  if (error.type === 'entity.too.large')
    return new OpenAIError(413, `the body is larger than the ${String(error.limit)}-byte limit`, 'invalid_request_error', null, 'body_too_large');
  if (error.type === 'request.aborted' || error.type === 'request.size.invalid')
    return new OpenAIError(400, 'the body ended before its declared Content-Length', 'invalid_request_error');
  if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported')
    return new OpenAIError(415, 'send the body as UTF-8 JSON (identity, gzip, deflate or br)', 'invalid_request_error');
  return undefined;
}

export function toOpenAIError(error: unknown): OpenAIError | undefined {
  if (error instanceof OpenAIError) return error;
  if (error instanceof HttpProblem) {
    const field = error.problem.field;
    return new OpenAIError(
      error.status,
      error.problem.detail,
      typeOfStatus(error.status),
      typeof field === 'string' ? field : null,
      error.problem.type.split('/').pop() ?? null,
      error.headers,
    );
  }
  return typeof error === 'object' && error !== null ? fromBodyReader(error) : undefined;
}

export function openAIErrorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const known = toOpenAIError(error);
    if (known) {
      if (known.status >= 500) log(`gateway: ${req.method} ${req.path}: ${known.status} ${known.message}`);
      sendError(req, res, known);
      return;
    }
    const errorId = randomUUID();
    log(`gateway: ${req.method} ${req.path}: unexpected error ${errorId}`, error);
    sendError(req, res, new OpenAIError(500, `an unexpected error occurred; the gateway's log has it under id ${errorId}`, 'server_error', null, 'internal_error'));
  };
}

export const notFound: RequestHandler = (req) => {
  throw new OpenAIError(
    404,
    `no route ${req.method} ${req.path}; the gateway serves POST /v1/chat/completions, POST /v1/completions, POST /v1/responses, POST /v1/messages, GET /v1/models, POST /v1/episodes/{id}/finish`,
    'not_found_error',
    null,
    'unknown_url',
  );
};
