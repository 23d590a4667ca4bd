// Problem details (RFC 9457): the members every error response has, and that extensions cannot
// overwrite them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpProblem, problem, problemTypes, problemTypeUri } from '../../core/problem.js';

test('a problem has type, title, status and detail, plus its extensions', () => {
  const body = problem(problemTypes.invalidStep, 'steps[2].reward: must be finite', { field: 'reward', index: 2 });
  assert.deepEqual(body, {
    type: 'urn:trajflow:problem:invalid-step',
    title: 'A step event is not valid',
    status: 400,
    detail: 'steps[2].reward: must be finite',
    field: 'reward',
    index: 2,
  });
});

test('extensions cannot replace a standard member', () => {
  for (const name of ['type', 'title', 'status', 'detail', 'instance']) {
    assert.throws(() => problem(problemTypes.internal, 'x', { [name]: 'y' }), RangeError);
  }
});

test('every problem type has a distinct URI and a 4xx or 5xx status', () => {
  const types = Object.values(problemTypes);
  assert.equal(new Set(types.map(problemTypeUri)).size, types.length);
  for (const type of types) assert.ok(type.status >= 400 && type.status < 600, type.slug);
});

test('an HttpProblem carries its body and headers; only 429 and 503 are retriable', () => {
  const limited = new HttpProblem(problemTypes.rateLimited, 'slow down', { retryAfterSeconds: 3 }, { 'Retry-After': '3' });
  assert.equal(limited.status, 429);
  assert.equal(limited.problem.retryAfterSeconds, 3);
  assert.deepEqual(limited.headers, { 'Retry-After': '3' });
  assert.equal(limited.retriable, true);
  assert.equal(new HttpProblem(problemTypes.kafkaUnavailable, 'down').retriable, true);
  assert.equal(new HttpProblem(problemTypes.invalidBody, 'bad').retriable, false);
});
