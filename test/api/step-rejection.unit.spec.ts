// Unit: what POST /v1/steps answers for a refused body, a spent rate limit and a failed publish, and the
// dead letter a refused body becomes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { problemTypes } from '../../core/problem.js';
import { InvalidEventError, OversizeEventError } from '../../schemas/index.js';
import type { StepRejection } from '../../api/step-body.js';
import { HTTP_SOURCE_TOPIC, isDeadLettered, publishFailure, rateLimitedProblem, refusalProblem, rejectedBodyLetter } from '../../api/step-rejection.js';

const badField: StepRejection = { type: problemTypes.invalidStep, detail: 'reward: must be finite', reason: 'invalid-value', field: 'reward', index: 2 };
const tooMany: StepRejection = { type: problemTypes.tooLarge, detail: 'the batch has 2 steps', reason: 'oversize' };

test('only a 400 is dead-lettered', () => {
  assert.equal(isDeadLettered(badField), true);
  assert.equal(isDeadLettered(tooMany), false);
});

test('the dead letter names the step and the caller, and caps the payload at half the event limit', () => {
  const letter = rejectedBodyLetter(badField, Buffer.alloc(10, 1), 'token-a', 8);
  assert.equal(letter.detail, 'reward: must be finite (step 2); HTTP caller token-a [payload truncated to 4 of 10 bytes]');
  assert.equal(letter.payload?.length, 4);
  assert.deepEqual(
    { ...letter, detail: '', payload: null },
    {
      reason: 'invalid-value',
      detail: '',
      sourceTopic: HTTP_SOURCE_TOPIC,
      sourcePartition: -1,
      sourceOffset: '-1',
      key: null,
      payload: null,
    },
  );
});

test('a lone surrogate in the detail becomes U+FFFD, and a small body is not truncated', () => {
  const { index: _index, ...unindexed } = badField;
  const letter = rejectedBodyLetter({ ...unindexed, detail: "unknown field '\ud800'" }, Buffer.from('{}'), 'c', 100);
  assert.equal(letter.detail, "unknown field '\ufffd'; HTTP caller c");
  assert.equal(letter.payload?.toString(), '{}');
});

test('the refusal problem locates the fault, and a dead-lettered one says whether the letter was written', () => {
  assert.deepEqual(Object.keys(refusalProblem(tooMany).problem), ['type', 'title', 'status', 'detail']);
  const problem = refusalProblem(badField, false).problem;
  assert.deepEqual(Object.keys(problem).slice(4), ['field', 'index', 'reason', 'deadLettered']);
  assert.equal(problem.deadLettered, false);
});

test('a spent rate limit waits whole seconds, at least one', () => {
  const quick = rateLimitedProblem(3, 10);
  assert.equal(quick.status, 429);
  assert.equal(quick.headers['Retry-After'], '1');
  assert.equal(quick.problem.detail, 'this token may publish 3 more step(s) in about 1 s');
  assert.equal(rateLimitedProblem(1, 2001).problem.retryAfterSeconds, 3);
});

test("a failed publish is the client's for an invalid or oversize step, Kafka's otherwise", () => {
  const invalid = publishFailure(new InvalidEventError('step', 'reward', 'reward: bad'));
  assert.equal(invalid.kind, 'invalid-step');
  assert.equal(invalid.problem.problem.field, 'reward');
  const oversize = publishFailure(new OversizeEventError('step', 10, 5));
  assert.equal(oversize.kind, 'invalid-step');
  assert.equal(oversize.problem.problem.field, undefined);
  const kafka = publishFailure(new Error('timed out'));
  assert.deepEqual([kafka.kind, kafka.kind === 'kafka' ? kafka.message : '', kafka.problem.status, kafka.problem.headers['Retry-After']], ['kafka', 'timed out', 503, '5']);
});
