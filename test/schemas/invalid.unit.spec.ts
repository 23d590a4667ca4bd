import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidEventError, type EventName } from '../../schemas/index.js';
import { makeStep, sampleEvents } from '../../bench/load/events.js';
import { codec } from './helpers.js';

function invalid(event: EventName, value: unknown, field: string, message?: RegExp): void {
  assert.throws(
    () => codec.encode(event, value as never),
    (e: unknown) => {
      assert.ok(e instanceof InvalidEventError, `expected InvalidEventError, got ${String(e)}`);
      assert.equal(e.event, event);
      assert.equal(e.field, field, e.message);
      assert.equal(e.code, 'INVALID_EVENT');
      if (message) assert.match(e.message, message);
      return true;
    },
  );
}

describe('InvalidEventError names the field that does not fit the schema', () => {
  const step = makeStep();
  const table: [string, unknown, string, RegExp?][] = [
    ['a string log-prob', { ...step, actionLogProbs: [-1, -2, -3, '-4'] }, 'actionLogProbs[3]', /must be "float", got "-4"/],
    ['a missing field', { ...step, stepIndex: undefined }, 'stepIndex', /undefined \(missing\)/],
    ['a fractional long', { ...step, policyVersion: 1.5 }, 'policyVersion', /"long", got 1.5/],
    ['a fractional token id', { ...step, actionTokenIds: [1, 2.5] }, 'actionTokenIds[1]'],
    ['an int beyond 32 bits', { ...step, actionTokenIds: [2 ** 31] }, 'actionTokenIds[0]'],
    ['a string metric', { ...step, metrics: { loss: 'high' } }, 'metrics.loss'],
    ['a map key that is not an identifier', { ...step, info: { 'a b': 3 } }, 'info["a b"]'],
    ['a number where a nullable string goes', { ...step, stateKey: 3 }, 'stateKey', /\["null","string"\]/],
    ['a wrong nullable array', { ...step, observationTokenIds: 'abc' }, 'observationTokenIds'],
    ['a bigint long', { ...step, eventTimeMs: 10n }, 'eventTimeMs', /bigint/],
    ['not an object at all', null, ''],
  ];
  for (const [name, value, field, message] of table) test(`step: ${name} → ${field || '(the value)'}`, () => invalid('step', value, field, message));

  test('trajectory: a nested step field', () => {
    const steps = sampleEvents.trajectory.steps.map((s, i) => (i === 1 ? { ...s, reward: 'one' } : s));
    invalid('trajectory', { ...sampleEvents.trajectory, steps }, 'steps[1].reward');
  });

  test('dead_letter: a string payload', () => {
    invalid('dead_letter', { ...sampleEvents.dead_letter, payload: 'abc' }, 'payload', /"bytes"/);
  });

  test('a valid event still encodes after a failure', () => {
    invalid('step', { ...step, reward: 'x' }, 'reward');
    assert.deepStrictEqual(codec.decode('step', codec.encode('step', step)), step);
  });
});
