// The gateway's express app, from its dependencies (nothing here opens a connection, so tests hand in fakes).
//
//   host check → auth (api/auth.ts) → per-token rate limit (api/token-bucket.ts) → Content-Type → body with a
//   size limit (api/body-limit.ts, declared or chunked) read as strict JSON (api/strict-json.ts) → strict request
//   (chat-request.ts, completion-request.ts, responses-request.ts, messages-request.ts: each API into one chat
//   request) → upstream → publish the step, await Kafka's ack → answer (JSON, or server-sent events).
//
// Every error is OpenAI-shaped, Anthropic-shaped on /v1/messages (errors.ts). GET /health is open (it says only
// whether the gateway runs).
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { bearerAuth, callerOf } from '../api/auth.js';
import { rawBody } from '../api/body-limit.js';
import { consoleLogger, type Logger } from '../api/error-handler.js';
import { hostCheck } from '../api/host-check.js';
import { parseStrictJson } from '../api/strict-json.js';
import { RateLimiter, type Clock } from '../api/token-bucket.js';
import { parseChatRequest, type GatewayRequest } from './chat-request.js';
import { parseCompletionRequest } from './completion-request.js';
import type { GatewayConfig } from './config.js';
import { ANTHROPIC_PATH, notFound, openAIErrorHandler } from './errors.js';
import { parseFinishRequest } from './finish-request.js';
import { parseMessagesRequest } from './messages-request.js';
import { inRequestTerms, OpenAIError } from './openai-error.js';
import { CallRecorder, type RecorderDeps } from './recorder.js';
import { parseResponsesRequest } from './responses-request.js';
import { sseText, type SseEvent } from './sse.js';
import { answerOf, checkAnswerable, finishEpisodeId, finishRunId, finishedBody } from './answer.js';
import { serverTiming } from './call-timing.js';

export interface GatewayDeps extends Omit<RecorderDeps, 'defaults' | 'publishTimeoutMs' | 'episodeTimeoutMs'> {
  readonly config: GatewayConfig;
  readonly monotonic?: Clock;
  readonly log?: Logger;
}

export interface GatewayApp extends Express {
  readonly recorder: CallRecorder;
}

const jsonBody = (maxBytes: number): RequestHandler[] => [
  (req, _res, next) => {
    const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json')
      throw new OpenAIError(415, `send the body as application/json${type ? `, not ${type}` : ''}`, 'invalid_request_error', null, 'unsupported_media_type');
    next();
  },
  rawBody(maxBytes),
  (req, _res, next) => {
    const parsed = parseStrictJson(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    if (!parsed.ok) throw new OpenAIError(400, parsed.detail, 'invalid_request_error', parsed.field ?? null, parsed.reason === 'duplicate-key' ? 'duplicate_key' : 'invalid_json');
    req.body = parsed.value;
    next();
  },
];

function rateLimit(limiter: RateLimiter): RequestHandler {
  return (_req, res, next) => {
    const taken = limiter.take(callerOf(res.locals).id);
    if (!taken.ok) {
      const seconds = String(Math.max(1, Math.ceil(taken.retryAfterMs / 1000)));
      throw new OpenAIError(429, `too many calls for this token; retry after ${seconds} s`, 'rate_limit_error', null, 'rate_limit_exceeded', { 'Retry-After': seconds });
    }
    next();
  };
}

function sendSse(res: Response, events: readonly SseEvent[]): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.end(sseText(events));
}

/** True from the moment the client closes its connection before the response was sent. */
function watchClient(res: Response): () => boolean {
  let gone = false;
  res.once('close', () => {
    gone = !res.writableEnded;
  });
  return () => gone;
}

/** A model endpoint: the strict request, the call recorded (its step published), then the answer. */
function answer(recorder: CallRecorder, parse: (body: unknown) => GatewayRequest): RequestHandler {
  return async (req: Request, res: Response) => {
    const request = parse(req.body);
    const clientGone = watchClient(res);
    const recorded = await recorder
      .call(request, (name) => req.get(name), { answerable: (upstreamAnswer) => checkAnswerable(request, upstreamAnswer), clientGone })
      .catch((error: unknown) => {
        throw inRequestTerms(error, request.fieldNames);
      });
    // Published, but nobody is left to answer: the turn is an orphan, named on the episode's next step.
    if (clientGone()) return recorder.orphaned(recorded);
    const reply = answerOf(request, recorded);
    res.setHeader('Server-Timing', serverTiming(recorded.timing));
    if (reply.stream) sendSse(res, reply.events);
    else res.json(reply.body);
  };
}

/** Anthropic's clients send their key as `x-api-key`: it is taken as the bearer token when no Authorization is given. */
const apiKeyAsBearer: RequestHandler = (req, _res, next) => {
  const key = req.get('x-api-key');
  if (key !== undefined && req.get('authorization') === undefined) req.headers.authorization = `Bearer ${key}`;
  next();
};

/** POST /v1/episodes/:id/finish: publishes the outcome step of each of the episode's trajectories. */
function finish(recorder: CallRecorder, defaultRun: string): RequestHandler {
  return async (req: Request, res: Response) => {
    const episodeId = finishEpisodeId(String(req.params.id));
    const body = parseFinishRequest(req.body);
    const runId = finishRunId(req.get('x-trajflow-run'), body.run, defaultRun);
    const ends = await recorder.finish(runId, episodeId, body.outcome);
    res.json(finishedBody(runId, episodeId, ends));
  };
}

/** The open and model-listing endpoints, the auth of /v1, and the calls behind their rate limit and JSON body. */
function routes(app: Express, deps: GatewayDeps, recorder: CallRecorder): void {
  const { config } = deps;
  const limiter = new RateLimiter({ ratePerSecond: config.callsPerSecond, burst: config.burst, ...(deps.monotonic ? { now: deps.monotonic } : {}) });
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', upstream: deps.upstream.name, models: deps.upstream.models(), openEpisodes: recorder.book.openCount, ...recorder.stats });
  });
  app.use(ANTHROPIC_PATH, apiKeyAsBearer);
  app.use('/v1', bearerAuth(config.tokens, config.tokens.length > 0));
  app.get('/v1/models', (_req, res) => {
    res.json({ object: 'list', data: deps.upstream.models().map((id) => ({ id, object: 'model', created: 0, owned_by: 'trajflow' })) });
  });
  const guarded = [rateLimit(limiter), ...jsonBody(config.maxBodyBytes)];
  app.post('/v1/chat/completions', ...guarded, answer(recorder, parseChatRequest));
  app.post('/v1/completions', ...guarded, answer(recorder, parseCompletionRequest));
  app.post('/v1/responses', ...guarded, answer(recorder, parseResponsesRequest));
  app.post(ANTHROPIC_PATH, ...guarded, answer(recorder, parseMessagesRequest));
  app.post('/v1/episodes/:id/finish', ...guarded, finish(recorder, config.runId));
}

export function createGatewayApp(deps: GatewayDeps): GatewayApp {
  const { config, log = consoleLogger } = deps;
  const recorder = new CallRecorder({
    ...deps,
    defaults: { runId: config.runId, envName: config.envName },
    publishTimeoutMs: config.publishTimeoutMs,
    episodeTimeoutMs: config.episodeTimeoutMs,
  });
  const app = express() as GatewayApp;
  Object.defineProperty(app, 'recorder', { value: recorder });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.use(hostCheck(config.allowedHosts, config.host));
  routes(app, deps, recorder);
  app.use(notFound);
  app.use(openAIErrorHandler(log));
  return app;
}
