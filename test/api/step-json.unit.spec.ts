// JSON → StepEvent conversion and the two body phases (parse, check): what is accepted, how nullable
// unions and maps are converted, and that every rejection names the field (and the index in a batch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { stepFromJson } from '../../api/step-json.js';
import { checkSteps, parseStepsBody, type StepRejection } from '../../api/step-body.js';
import { makeStep } from '../../bench/load/events.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const asJson = (step: StepEvent): Record<string, unknown> => JSON.parse(JSON.stringify(step)) as Record<string, unknown>;

test('a step written as JSON converts back to the same step', () => {
  const step = makeStep({}, 5);
  assert.deepEqual(stepFromJson(asJson(step)), { ok: true, value: step });
});

test('observationTokenIds and stateKey may be absent or null, and become null', () => {
  const { observationTokenIds: _o, stateKey: _s, ...rest } = asJson(makeStep());
  const absent = stepFromJson(rest);
  assert.ok(absent.ok);
  assert.equal(absent.value.observationTokenIds, null);
  assert.equal(absent.value.stateKey, null);
  const nulls = stepFromJson({ ...rest, observationTokenIds: null, stateKey: null });
  assert.ok(nulls.ok);
  assert.deepEqual(nulls.value, absent.value);
});

test('Avro\'s JSON union form ({"array": …}, {"string": …}) is read too', () => {
  const step = makeStep();
  const converted = stepFromJson({ ...asJson(step), observationTokenIds: { array: step.observationTokenIds }, stateKey: { string: step.stateKey } });
  assert.deepEqual(converted, { ok: true, value: step });
});

test('metrics and info may be left out, meaning empty maps', () => {
  const { metrics: _m, info: _i, ...rest } = asJson(makeStep());
  const converted = stepFromJson(rest);
  assert.ok(converted.ok);
  assert.deepEqual(converted.value.metrics, {});
  assert.deepEqual(converted.value.info, {});
});

test('a map key named __proto__ stays a key and does not change the prototype', () => {
  const converted = stepFromJson({ ...asJson(makeStep()), info: JSON.parse('{"__proto__": "x"}') });
  assert.ok(converted.ok);
  assert.equal(Object.getPrototypeOf(converted.value.info), Object.prototype);
  assert.deepEqual(Object.keys(converted.value.info), ['__proto__']);
});

const badFields: Array<[string, Record<string, unknown>, string, RegExp, boolean]> = [
  ['a wrong type', { policyVersion: 'v3' }, 'policyVersion', /must be an integer/, false],
  ['a float step index', { stepIndex: 1.5 }, 'stepIndex', /32-bit integer/, false],
  ['a token id beyond int32', { actionTokenIds: [1, 2 ** 31] }, 'actionTokenIds[1]', /32-bit integer/, false],
  ['a string in a number map', { metrics: { loss: 'high' } }, 'metrics.loss', /must be a number/, false],
  ['a union object with the wrong branch', { stateKey: { int: 3 } }, 'stateKey', /must be null, a string/, false],
  ['an unknown field', { stateKye: 'x' }, 'stateKye', /is not a field of a step event/, true],
  ['a boolean as a string', { terminated: 'true' }, 'terminated', /true or false/, false],
];

for (const [what, override, field, message, unknownField] of badFields) {
  test(`${what} is rejected, naming ${field}`, () => {
    const converted = stepFromJson({ ...asJson(makeStep()), ...override });
    assert.ok(!converted.ok);
    assert.equal(converted.field, field);
    assert.match(converted.message, message);
    assert.equal(converted.unknownField, unknownField);
  });
}

test('a missing required field is named', () => {
  const { reward: _r, ...rest } = asJson(makeStep());
  assert.deepEqual(stepFromJson(rest), { ok: false, field: 'reward', message: 'is missing', unknownField: false });
});

test('a step that is not an object is rejected without a field', () => {
  for (const value of [null, [], 'step', 3]) {
    const converted = stepFromJson(value);
    assert.ok(!converted.ok);
    assert.equal(converted.field, '');
  }
});

// ---- the two body phases ----

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

function rejectionOf(raw: Buffer, kind: 'json' | 'avro' = 'json', maxSteps = 10): StepRejection {
  const parsed = parseStepsBody(kind, raw, maxSteps);
  if (!parsed.ok) return parsed.rejection;
  const checked = checkSteps(parsed.value, codec);
  assert.ok(!checked.ok, 'expected a rejection');
  return checked.rejection;
}

test('one step or a batch parses to its candidates; the count is what the rate limiter charges', () => {
  const single = parseStepsBody('json', json(makeStep()), 10);
  assert.ok(single.ok);
  assert.equal(single.value.batch, false);
  assert.equal(single.value.candidates.length, 1);
  const batch = parseStepsBody('json', json({ steps: [makeStep({}, 1), makeStep({}, 2), makeStep({}, 3)] }), 10);
  assert.ok(batch.ok);
  assert.equal(batch.value.batch, true);
  assert.equal(batch.value.candidates.length, 3);
  const checked = checkSteps(batch.value, codec);
  assert.ok(checked.ok);
  assert.deepEqual(checked.value, [makeStep({}, 1), makeStep({}, 2), makeStep({}, 3)]);
});

test('a bad step in a batch names its index and field; the dead-letter reason says what kind', () => {
  const steps = [makeStep({}, 1), makeStep({ actionLogProbs: [] }, 2), makeStep({}, 3)];
  const rejection = rejectionOf(json({ steps }));
  assert.equal(rejection.index, 1);
  assert.equal(rejection.field, 'actionLogProbs');
  assert.equal(rejection.reason, 'invalid-value');
  assert.equal(rejection.type.status, 400);
  assert.match(rejection.detail, /^steps\[1\]\.actionLogProbs/);
});

test('body-level mistakes: not JSON, not an object, extra keys next to steps, empty or oversized batches', () => {
  assert.equal(rejectionOf(Buffer.from('{"eventId": ')).reason, 'bad-json');
  assert.equal(rejectionOf(Buffer.alloc(0)).reason, 'empty-payload');
  assert.equal(rejectionOf(json([makeStep()])).reason, 'invalid-value');
  const extra = rejectionOf(json({ steps: [makeStep()], runId: 'x' }));
  assert.deepEqual([extra.reason, extra.field], ['unknown-field', 'runId']);
  assert.equal(rejectionOf(json({ steps: [] })).field, 'steps');
  const tooMany = rejectionOf(json({ steps: [makeStep(), makeStep()] }), 'json', 1);
  assert.equal(tooMany.type.status, 413);
});

test('Avro bodies: a valid single-object step decodes; garbage and other events are rejected with the codec reason', () => {
  const step = makeStep({}, 9);
  const parsed = parseStepsBody('avro', codec.encode('step', step), 10);
  assert.ok(parsed.ok);
  assert.deepEqual(checkSteps(parsed.value, codec), { ok: true, value: [step] });
  assert.equal(rejectionOf(Buffer.from('not avro'), 'avro').reason, 'bad-marker');
  const bytes = codec.encode('step', step);
  assert.equal(rejectionOf(bytes.subarray(0, bytes.length - 5), 'avro').reason, 'truncated');
  const semantic = rejectionOf(codec.encode('step', { ...step, actionLogProbs: step.actionLogProbs.map(() => 0.5) }), 'avro');
  assert.deepEqual([semantic.reason, semantic.field], ['invalid-value', 'actionLogProbs[0]']);
});
