// POST /v1/steps: step events from any language, over HTTP, into <prefix>.env.steps.
//
//   auth (401/403) → content type (415) → body read with a size limit (413) → parse → rate limit on the
//   step count (429) → convert + validate every step (400) → publish all, await Kafka's acks → 202.
//
// All or nothing: every step of a batch is checked (and test-encoded) before any is queued, so a bad
// batch publishes nothing. 202 is sent only after the broker acknowledged every step (acks=all); when
// Kafka does not answer within publishTimeoutMs the answer is 503 (a retry is safe: eventIds dedupe).
//
// Dead letters: a body that was read but rejected with 400 (not JSON, wrong shape, unknown field, bad
// value, undecodable Avro) is also written to the dead-letter topic with the reason, source topic
// 'http:/v1/steps', partition and offset -1 — the project rule that malformed events are never dropped
// silently holds for HTTP too, and the dashboard shows them next to the ones consumers rejected.
// Requests refused before their body is looked at (401, 403, 415, 413, 429) are not dead-lettered: they
// carry no event, and writing them would let an unauthenticated client fill the topic.
import express, { type RequestHandler, type Router } from 'express';
import type { EventCodec, StepEvent } from '../schemas/index.js';
import type { DeadLetterSink, StepPublisher } from '../streams/index.js';
import { bearerAuth, callerOf } from './auth.js';
import { rawBody } from './body-limit.js';
import type { ApiConfig } from './config.js';
import { withDeadline } from './deadline.js';
import type { Logger } from './error-handler.js';
import { methodNotAllowed } from './error-handler.js';
import { HttpProblem, problemTypes } from '../core/problem.js';
import { AVRO_TYPE, JSON_TYPE, checkSteps, parseStepsBody, type BodyKind, type StepRejection } from './step-body.js';
import { isDeadLettered, publishFailure, rateLimitedProblem, refusalProblem, rejectedBodyLetter } from './step-rejection.js';
import type { RateLimiter } from './token-bucket.js';

export { HTTP_SOURCE_TOPIC } from './step-rejection.js';

export interface IngestStats {
  acceptedSteps: number;
  rejectedRequests: number;
  deadLettered: number;
  publishFailures: number;
  lastPublishError: string | null;
}

export interface StepsRouteDeps {
  readonly config: Pick<ApiConfig, 'tokens' | 'maxBodyBytes' | 'maxStepsPerRequest' | 'publishTimeoutMs'>;
  readonly codec: EventCodec;
  readonly steps: Pick<StepPublisher, 'publishAll'>;
  readonly deadLetters: DeadLetterSink;
  readonly limiter: RateLimiter;
  readonly stats: IngestStats;
  readonly log: Logger;
}

/** The media type of a request, lowercased and without parameters; '' when there is none. */
function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

const KINDS: Record<string, BodyKind> = { [JSON_TYPE]: 'json', [AVRO_TYPE]: 'avro' };

const contentType: RequestHandler = (req, res, next) => {
  const kind = KINDS[mediaType(req.get('content-type'))];
  if (!kind) {
    const given = req.get('content-type');
    throw new HttpProblem(
      problemTypes.unsupportedMediaType,
      `${given ? `Content-Type '${given}' is not accepted` : 'the request has no Content-Type'}: send ${JSON_TYPE} (one step or {"steps": [...]}) or ${AVRO_TYPE} (one Avro single-object step event)`,
      {},
      { 'Accept-Post': `${JSON_TYPE}, ${AVRO_TYPE}` },
    );
  }
  res.locals.bodyKind = kind;
  next();
};

/** Writes the dead letter of a refused body; false when it could not be written (the client still gets its 400). */
async function deadLetter(deps: StepsRouteDeps, rejection: StepRejection, raw: Buffer, callerId: string): Promise<boolean> {
  try {
    await withDeadline(deps.deadLetters.route(rejectedBodyLetter(rejection, raw, callerId, deps.codec.maxEventBytes)), deps.config.publishTimeoutMs, 'writing the dead letter');
    deps.stats.deadLettered++;
    return true;
  } catch (error) {
    deps.log(`POST /v1/steps: could not dead-letter a rejected body (${rejection.reason})`, error);
    return false;
  }
}

/** Counts the refusal, dead-letters a 400's body, and throws the problem. */
async function refuse(deps: StepsRouteDeps, rejection: StepRejection, raw: Buffer, callerId: string): Promise<never> {
  deps.stats.rejectedRequests++;
  if (!isDeadLettered(rejection)) throw refusalProblem(rejection);
  throw refusalProblem(rejection, await deadLetter(deps, rejection, raw, callerId));
}

/** Publishes every step and awaits Kafka's acks within the deadline; a failure is thrown as its problem. */
async function publish(deps: StepsRouteDeps, steps: StepEvent[]): Promise<void> {
  try {
    // publishAll validates synchronously; wrapping it turns a throw into a rejection handled below.
    await withDeadline(
      Promise.resolve().then(() => deps.steps.publishAll(steps)),
      deps.config.publishTimeoutMs,
      'Kafka acknowledging the steps',
    );
    deps.stats.acceptedSteps += steps.length;
  } catch (error) {
    const failure = publishFailure(error);
    if (failure.kind === 'kafka') {
      deps.stats.publishFailures++;
      deps.stats.lastPublishError = failure.message;
    }
    throw failure.problem;
  }
}

/** The body read: parse, rate limit on the step count, check every step, publish all, 202. */
function postSteps(deps: StepsRouteDeps): RequestHandler {
  return async (req, res) => {
    const caller = callerOf(res.locals);
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const parsed = parseStepsBody(res.locals.bodyKind as BodyKind, raw, deps.config.maxStepsPerRequest);
    if (!parsed.ok && parsed.rejection.type.status === 413) await refuse(deps, parsed.rejection, raw, caller.id);
    // A body that does not parse counts as one step: it still costs the server, and is dead-lettered.
    const count = parsed.ok ? parsed.value.candidates.length : 1;
    const taken = deps.limiter.take(caller.id, count);
    if (!taken.ok) throw rateLimitedProblem(count, taken.retryAfterMs);
    if (!parsed.ok) return refuse(deps, parsed.rejection, raw, caller.id);
    const checked = checkSteps(parsed.value, deps.codec);
    if (!checked.ok) return refuse(deps, checked.rejection, raw, caller.id);
    await publish(deps, checked.value);
    res.status(202).json({ accepted: checked.value.length });
  };
}

export function stepsRouter(deps: StepsRouteDeps): Router {
  const { config } = deps;
  const router = express.Router();
  router.post(
    '/v1/steps',
    bearerAuth(config.tokens, config.tokens.length > 0),
    contentType,
    // Any media type: contentType above already decided. Too big: 413 before reading any of it when declared,
    // as soon as the limit is passed when chunked (body-limit.ts says why); also after decompression.
    rawBody(config.maxBodyBytes),
    postSteps(deps),
  );
  router.all('/v1/steps', methodNotAllowed(['POST']));
  return router;
}
