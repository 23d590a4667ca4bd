// Property (fast-check): the validators hold what they promise for any step event, however odd. Generated
// steps (odd-steps.ts) mix unicode edge cases (lone surrogates, astral characters, NUL, U+FFFD, BOM), float
// extremes (±1e39, float32's largest and smallest, subnormals, -0, NaN, ±Infinity), integers at and past int32
// and avsc's long limit, long strings, and ids on both sides of the read API's grammar. For each, through
// validateEvent and validateIngestStep, either
//   * it is refused, naming a field of the step, or
//   * it encodes, every string in the bytes (map keys included) is valid UTF-8 (TextDecoder, fatal), and it
//     decodes to the value validated (floats as float32 holds them: Math.fround, -0 kept).
// test/interop/generated-steps.int.spec.ts sends accepted ones through Apache Avro's Java decoder as well.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { StepEvent } from '../../schemas/index.js';
import { validateEvent } from '../../schemas/index.js';
import { validateIngestStep } from '../../schemas/validate.js';
import { codec, registry } from './helpers.js';
import { oddStep, stringsOf, type AvroType } from './odd-steps.js';

const STEP_SCHEMA = JSON.parse(registry.current('step').schema) as AvroType;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const FIELDS = new Set((STEP_SCHEMA as unknown as { fields: { name: string }[] }).fields.map((f) => f.name));

/** The step as its Avro encoding must give it back: log-probs as float32 holds them (maps as plain objects: fast-check's have no prototype). */
function asEncoded(step: StepEvent): StepEvent {
  return { ...step, actionLogProbs: step.actionLogProbs.map(Math.fround), metrics: { ...step.metrics }, info: { ...step.info } };
}

/** The property for one step and one validator; returns what happened, for the coverage counts. */
function holds(step: StepEvent, validate: (s: StepEvent) => ReturnType<typeof validateIngestStep>): 'refused' | 'accepted' {
  const check = validate(step);
  if (!check.ok) {
    // Refused naming a field of the step (a path inside one: `actionLogProbs[3]`, `info["a b"]`).
    const top = /^[A-Za-z]+/.exec(check.field)?.[0];
    assert.ok(top !== undefined && FIELDS.has(top), `refused without naming a field: ${JSON.stringify(check)}`);
    assert.doesNotMatch(check.message, /[\uD800-\uDFFF]/u, 'the message is well-formed (it may go into a dead letter)');
    return 'refused';
  }
  const bytes = codec.encode('step', step);
  const strings: Uint8Array[] = [];
  const end = stringsOf(STEP_SCHEMA, bytes, 10, strings);
  assert.equal(end, bytes.length, 'the walk read the whole datum');
  for (const s of strings) assert.doesNotThrow(() => strictUtf8.decode(s), `a string of the encoding is not UTF-8: ${Buffer.from(s).toString('hex')}`);
  assert.deepStrictEqual(codec.decode('step', bytes), asEncoded(step));
  return 'accepted';
}

test('property: every odd step is refused naming a field, or round-trips through Avro with UTF-8 strings (validateEvent and validateIngestStep)', () => {
  const seen = { event: { refused: 0, accepted: 0 }, ingest: { refused: 0, accepted: 0 } };
  fc.assert(
    fc.property(oddStep, (step) => {
      seen.event[holds(step, (s) => validateEvent('step', s))]++;
      seen.ingest[holds(step, validateIngestStep)]++;
    }),
    { numRuns: 3000 },
  );
  // Both outcomes happen often enough for the property to mean something.
  for (const [validator, counts] of Object.entries(seen)) {
    assert.ok(counts.accepted > 100 && counts.refused > 100, `${validator}: ${JSON.stringify(counts)}`);
  }
});

test('property: a lone surrogate anywhere in a step is refused, naming the field that holds it', () => {
  const places = ['observation', 'action', 'envName', 'stateKey', 'metrics', 'info', 'info.value'] as const;
  fc.assert(
    fc.property(fc.constantFrom(...places), fc.string(), fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF'), fc.string(), (place, before, lone, after) => {
      const text = `${before}${lone}${after}`;
      const base: StepEvent = {
        eventId: 'e-1',
        runId: 'r',
        envName: 'E',
        envVersion: 'v1',
        groupId: 'g',
        episodeId: 'ep',
        stepIndex: 0,
        observation: 'o',
        observationTokenIds: null,
        action: 'a',
        actionTokenIds: [],
        actionLogProbs: [],
        policyVersion: 0,
        reward: 0,
        terminated: false,
        truncated: false,
        actionValid: true,
        stateKey: null,
        metrics: {},
        info: {},
        eventTimeMs: 1,
      };
      const step: StepEvent =
        place === 'metrics'
          ? { ...base, metrics: { [text]: 1 } }
          : place === 'info'
            ? { ...base, info: { [text]: 'x' } }
            : place === 'info.value'
              ? { ...base, info: { k: text } }
              : { ...base, [place]: text };
      const result = validateIngestStep(step);
      assert.equal(result.ok, false);
      if (!result.ok) assert.equal(result.field, place === 'info.value' ? 'info.k' : place);
    }),
    { numRuns: 500 },
  );
});
