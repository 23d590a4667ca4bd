// Unit: validateIngestStep, the rules for a step entering the system (POST /v1/steps): validateEvent's, and ids
// of the read API's grammar (schemas/ids.ts, the ID_PATTERN storage/query/params.ts checks paths and queries
// with), so that every run, group and episode that is accepted can be read back. The consumers keep
// validateEvent's rules: a step already in Kafka is not refused for its ids.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateEvent, type StepEvent } from '../../schemas/index.js';
import { validateIngestStep } from '../../schemas/validate.js';
import { ID_PATTERN as READ_API_ID_PATTERN } from '../../storage/query/params.js';
import { makeStep } from '../../bench/load/events.js';

const step = makeStep({}, 5);

const accepted: Array<[string, Partial<StepEvent>]> = [
  ['ids like the actors make them', { runId: 'run-7', groupId: 'run-7/g12', episodeId: 'run-7/g12/e3', eventId: 'run-7/g12/e3/s0' }],
  ['a UUID event id, ids with . _ : and of one character', { eventId: '3f1e8f0c-5b7a-4c61-9d2e-8a0b6c4d2e11', runId: 'a.b_c:d', groupId: '0', episodeId: 'E' }],
  ['ids of 256 characters', { runId: 'r'.repeat(256), episodeId: `1${'e'.repeat(255)}`, groupId: `G${'-'.repeat(255)}`, eventId: '9'.repeat(256) }],
];

const refused: Array<[string, Partial<StepEvent>, string]> = [
  ['a run id with a quote', { runId: "run'1" }, 'runId'],
  ['a run id with a space', { runId: 'run 1' }, 'runId'],
  ['an episode id of 257 characters', { episodeId: 'e'.repeat(257) }, 'episodeId'],
  ['a group id starting with a dash', { groupId: '-g' }, 'groupId'],
  ['a group id starting with a slash', { groupId: '/g' }, 'groupId'],
  ['an event id with a non-ASCII letter', { eventId: 'évt-1' }, 'eventId'],
  ['an episode id with a backslash', { episodeId: 'e\\1' }, 'episodeId'],
  ['an episode id with a NUL', { episodeId: 'e\u00001' }, 'episodeId'],
  ['an empty event id', { eventId: '' }, 'eventId'],
];

for (const [what, change] of accepted) {
  test(`accepts ${what}`, () => {
    const value = { ...step, ...change };
    assert.deepEqual(validateIngestStep(value), { ok: true });
    for (const id of [value.runId, value.groupId, value.episodeId]) assert.ok(READ_API_ID_PATTERN.test(id), `${id}: the read API takes it`);
  });
}

for (const [what, change, field] of refused) {
  test(`refuses ${what} (${field}), an id the read API would refuse`, () => {
    const value = { ...step, ...change };
    const result = validateIngestStep(value);
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.equal(result.field, field, result.message);
      assert.match(result.message, /A-Z a-z 0-9|must not be empty/);
    }
    assert.equal(READ_API_ID_PATTERN.test(value[field as 'runId']), false, 'the read API refuses it too');
  });
}

test("validateEvent's rules come first and stay: a bad log-prob is refused with good ids, and consumers' rules take any id", () => {
  const result = validateIngestStep({ ...step, actionTokenIds: [1], actionLogProbs: [0.5] });
  assert.equal(result.ok, false);
  if (!result.ok) assert.equal(result.field, 'actionLogProbs[0]');
  assert.deepEqual(validateEvent('step', { ...step, runId: 'run 1' }), { ok: true }, 'a step already in Kafka is not dead-lettered for its id');
});
