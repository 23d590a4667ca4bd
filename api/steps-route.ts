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
import express, { type Request, type RequestHandler, type Router } from 'express';
import { InvalidEventError, OversizeEventError, type EventCodec, type StepEvent } from '../schemas/index.js';
import type { DeadLetterSink, StepPublisher } from '../streams/index.js';
import { bearerAuth, callerOf } from './auth.js';
import { rawBody } from './body-limit.js';
import type { DashboardConfig } from './config.js';
import { withDeadline } from './deadline.js';
import type { Logger } from './error-handler.js';
import { methodNotAllowed } from './error-handler.js';
import { HttpProblem, problemTypes } from '../core/problem.js';
import { AVRO_TYPE, JSON_TYPE, checkSteps, parseStepsBody, type BodyKind, type StepRejection } from './step-body.js';
import type { RateLimiter } from './token-bucket.js';

export const HTTP_SOURCE_TOPIC = 'http:/v1/steps';

export interface IngestStats {
  acceptedSteps: number;
  rejectedRequests: number;
  deadLettered: number;
  publishFailures: number;
  lastPublishError: string | null;
}

export interface StepsRouteDeps {
  readonly config: Pick<DashboardConfig, 'tokens' | 'maxBodyBytes' | 'maxStepsPerRequest' | 'publishTimeoutMs'>;
  readonly codec: EventCodec;
  readonly steps: Pick<StepPublisher, 'publishAll'>;
  readonly deadLetters: DeadLetterSink;
  readonly limiter: RateLimiter;
  readonly stats: IngestStats;
  readonly log: Logger;
}

/** The media type of a request, lowercased and without parameters; '' when there is none. */
function mediaType(req: Request): string {
  return (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

const KINDS: Record<string, BodyKind> = { [JSON_TYPE]: 'json', [AVRO_TYPE]: 'avro' };

const contentType: RequestHandler = (req, res, next) => {
  const kind = KINDS[mediaType(req)];
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

/** Each lone UTF-16 surrogate replaced by U+FFFD (String.prototype.toWellFormed, Node 20). */
function toWellFormed(text: string): string {
  return (text as unknown as { toWellFormed(): string }).toWellFormed();
}

/** A dead letter's payload is capped so that the dead_letter event itself stays under the codec's limit. */
function payloadCap(codec: EventCodec): number {
  return Math.floor(codec.maxEventBytes / 2);
}

export function stepsRouter(deps: StepsRouteDeps): Router {
  const { config, codec, limiter, stats, log } = deps;
  const router = express.Router();

  async function deadLetter(rejection: StepRejection, raw: Buffer, callerId: string): Promise<boolean> {
    const cap = payloadCap(codec);
    const where = rejection.index === undefined ? '' : ` (step ${rejection.index})`;
    const truncated = raw.length > cap ? ` [payload truncated to ${cap} of ${raw.length} bytes]` : '';
    try {
      await withDeadline(
        deps.deadLetters.route({
          reason: rejection.reason,
          // The detail may quote what the client sent (an unknown field's name): a lone surrogate in it would
          // make the dead letter itself a string UTF-8 cannot encode.
          detail: toWellFormed(`${rejection.detail}${where}; HTTP caller ${callerId}${truncated}`),
          sourceTopic: HTTP_SOURCE_TOPIC,
          sourcePartition: -1,
          sourceOffset: '-1',
          key: null,
          payload: raw.subarray(0, cap),
        }),
        config.publishTimeoutMs,
        'writing the dead letter',
      );
      stats.deadLettered++;
      return true;
    } catch (error) {
      // The client still gets its 400 (the fault is in its body); the lost dead letter is logged.
      log(`POST /v1/steps: could not dead-letter a rejected body (${rejection.reason})`, error);
      return false;
    }
  }

  async function refuse(rejection: StepRejection, raw: Buffer, callerId: string): Promise<never> {
    stats.rejectedRequests++;
    const located = { ...(rejection.field === undefined ? {} : { field: rejection.field }), ...(rejection.index === undefined ? {} : { index: rejection.index }) };
    if (rejection.type.status !== 400) throw new HttpProblem(rejection.type, rejection.detail, located);
    const deadLettered = await deadLetter(rejection, raw, callerId);
    throw new HttpProblem(rejection.type, rejection.detail, { ...located, reason: rejection.reason, deadLettered });
  }

  async function publish(steps: StepEvent[]): Promise<void> {
    try {
      // publishAll validates synchronously; wrapping it turns a throw into a rejection handled below.
      await withDeadline(
        Promise.resolve().then(() => deps.steps.publishAll(steps)),
        config.publishTimeoutMs,
        'Kafka acknowledging the steps',
      );
      stats.acceptedSteps += steps.length;
    } catch (error) {
      if (error instanceof InvalidEventError || error instanceof OversizeEventError) {
        // checkSteps should have caught it; still the client's fault, and nothing was queued.
        throw new HttpProblem(problemTypes.invalidStep, error.message, error instanceof InvalidEventError ? { field: error.field } : {});
      }
      stats.publishFailures++;
      stats.lastPublishError = (error as Error)?.message ?? String(error);
      throw new HttpProblem(
        problemTypes.kafkaUnavailable,
        'Kafka did not acknowledge the steps; some may have been written. Retry later: consumers drop duplicates by eventId.',
        {},
        { 'Retry-After': '5' },
      );
    }
  }

  router.post(
    '/v1/steps',
    bearerAuth(config.tokens, config.tokens.length > 0),
    contentType,
    // Any media type: contentType above already decided. Too big: 413 before reading any of it when declared,
    // as soon as the limit is passed when chunked (body-limit.ts says why); also after decompression.
    rawBody(config.maxBodyBytes),
    async (req, res) => {
      const caller = callerOf(res.locals);
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const parsed = parseStepsBody(res.locals.bodyKind as BodyKind, raw, config.maxStepsPerRequest);
      if (!parsed.ok && parsed.rejection.type.status === 413) await refuse(parsed.rejection, raw, caller.id);
      // A body that does not parse counts as one step: it still costs the server, and is dead-lettered.
      const count = parsed.ok ? parsed.value.candidates.length : 1;
      const taken = limiter.take(caller.id, count);
      if (!taken.ok) {
        const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
        throw new HttpProblem(
          problemTypes.rateLimited,
          `this token may publish ${count} more step(s) in about ${seconds} s`,
          { retryAfterSeconds: seconds },
          { 'Retry-After': String(seconds) },
        );
      }
      if (!parsed.ok) return refuse(parsed.rejection, raw, caller.id);
      const checked = checkSteps(parsed.value, codec);
      if (!checked.ok) return refuse(checked.rejection, raw, caller.id);
      await publish(checked.value);
      res.status(202).json({ accepted: checked.value.length });
    },
  );
  router.all('/v1/steps', methodNotAllowed(['POST']));
  return router;
}
