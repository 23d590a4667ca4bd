// What POST /v1/steps answers when it does not accept a body, as pure functions of the rejection: the
// problem the client gets, the dead letter a rejected body becomes, and how a failed publish is told apart
// (the client's step, or Kafka). steps-route.ts does the I/O around them.
import { HttpProblem, problemTypes } from '../core/problem.js';
import { InvalidEventError, OversizeEventError } from '../schemas/index.js';
import type { DeadLetterInput } from '../streams/index.js';
import type { StepRejection } from './step-body.js';

export const HTTP_SOURCE_TOPIC = 'http:/v1/steps';

/** Each lone UTF-16 surrogate replaced by U+FFFD (String.prototype.toWellFormed, Node 20). */
function toWellFormed(text: string): string {
  return (text as unknown as { toWellFormed(): string }).toWellFormed();
}

/** Only a body refused with 400 is dead-lettered: 413s are refused before the body is looked at. */
export function isDeadLettered(rejection: StepRejection): boolean {
  return rejection.type.status === 400;
}

/** The dead letter of a refused body; its payload is capped at half the event limit, so the letter itself fits. */
export function rejectedBodyLetter(rejection: StepRejection, raw: Buffer, callerId: string, maxEventBytes: number): DeadLetterInput {
  const cap = Math.floor(maxEventBytes / 2);
  const where = rejection.index === undefined ? '' : ` (step ${rejection.index})`;
  const truncated = raw.length > cap ? ` [payload truncated to ${cap} of ${raw.length} bytes]` : '';
  return {
    reason: rejection.reason,
    // The detail may quote what the client sent (an unknown field's name): a lone surrogate in it would
    // make the dead letter itself a string UTF-8 cannot encode.
    detail: toWellFormed(`${rejection.detail}${where}; HTTP caller ${callerId}${truncated}`),
    sourceTopic: HTTP_SOURCE_TOPIC,
    sourcePartition: -1,
    sourceOffset: '-1',
    key: null,
    payload: raw.subarray(0, cap),
  };
}

/** The problem of a refused body: where it is wrong, and for a dead-lettered one its reason and whether the letter was written. */
export function refusalProblem(rejection: StepRejection, deadLettered?: boolean): HttpProblem {
  const located = { ...(rejection.field === undefined ? {} : { field: rejection.field }), ...(rejection.index === undefined ? {} : { index: rejection.index }) };
  if (deadLettered === undefined) return new HttpProblem(rejection.type, rejection.detail, located);
  return new HttpProblem(rejection.type, rejection.detail, { ...located, reason: rejection.reason, deadLettered });
}

/** 429 for a token whose bucket cannot pay for `count` steps, with the wait in whole seconds (at least 1). */
export function rateLimitedProblem(count: number, retryAfterMs: number): HttpProblem {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new HttpProblem(
    problemTypes.rateLimited,
    `this token may publish ${count} more step(s) in about ${seconds} s`,
    { retryAfterSeconds: seconds },
    { 'Retry-After': String(seconds) },
  );
}

export type PublishFailure = { readonly kind: 'invalid-step'; readonly problem: HttpProblem } | { readonly kind: 'kafka'; readonly message: string; readonly problem: HttpProblem };

/** A failed publish: a step the checks let through is still the client's fault (nothing was queued); anything else is Kafka's. */
export function publishFailure(error: unknown): PublishFailure {
  if (error instanceof InvalidEventError || error instanceof OversizeEventError) {
    return { kind: 'invalid-step', problem: new HttpProblem(problemTypes.invalidStep, error.message, error instanceof InvalidEventError ? { field: error.field } : {}) };
  }
  return {
    kind: 'kafka',
    message: (error as Error)?.message ?? String(error),
    problem: new HttpProblem(
      problemTypes.kafkaUnavailable,
      'Kafka did not acknowledge the steps; some may have been written. Retry later: consumers drop duplicates by eventId.',
      {},
      { 'Retry-After': '5' },
    ),
  };
}
