// Step events for the ingest property test: the odd steps of test/schemas/odd-steps.ts, plus a value for
// every field of the current step schema those do not make (a field added by a later schema version), drawn
// from the field's Avro type — so the test sends what the current schema allows without being edited for
// each new field. Two steps with one identity (the steps table's key: run, episode, step index, event id) are
// one step delivered twice, which the sink stores once by design; the identities of a sample are unique.
import fc from 'fast-check';
import type { StepEvent } from '../../schemas/index.js';
import { oddStep } from '../schemas/odd-steps.js';

type AvroType = string | readonly AvroType[] | { readonly type: string; readonly items?: AvroType; readonly values?: AvroType };

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('\uD83D\uDE00', '\u0000', '\uD800'));
const INT_EDGES = [0, 1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -1];

/** Values of an Avro type, now and then one it cannot hold (an int past int32, a lone surrogate). */
function ofType(type: AvroType): fc.Arbitrary<unknown> {
  if (Array.isArray(type)) return fc.oneof(...type.map(ofType));
  const name = typeof type === 'string' ? type : (type as { type: string }).type;
  const complex = type as { items?: AvroType; values?: AvroType };
  switch (name) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'int':
    case 'long':
      return fc.oneof(fc.nat(1000), fc.constantFrom(...INT_EDGES));
    case 'float':
    case 'double':
      return fc.oneof(fc.double({ min: -10, max: 10, noNaN: true }), fc.constantFrom(-0, 1e39, Number.NaN));
    case 'string':
      return text;
    case 'array':
      return fc.array(ofType(complex.items!), { maxLength: 4 });
    case 'map':
      return fc.dictionary(text, ofType(complex.values!), { maxKeys: 3 });
    default:
      throw new Error(`schema-steps.ts: no generator for Avro type ${JSON.stringify(type)}; add one`);
  }
}

/** Steps of the current schema: odd-steps.ts' fields, and generated values of the fields it does not know. */
export function schemaSteps(schema: { readonly fields: ReadonlyArray<{ readonly name: string; readonly type: AvroType }> }): fc.Arbitrary<StepEvent> {
  const known = new Set(Object.keys(fc.sample(oddStep, { numRuns: 1, seed: 1 })[0]!));
  const extra = schema.fields.filter((field) => !known.has(field.name));
  if (extra.length === 0) return oddStep;
  const more = fc.record(Object.fromEntries(extra.map((field) => [field.name, ofType(field.type)])));
  return fc.tuple(oddStep, more).map(([step, fields]) => ({ ...step, ...fields }) as StepEvent);
}

/** The identity the steps table keeps one row per (its sorting key). */
export const stepIdentity = (step: Pick<StepEvent, 'runId' | 'episodeId' | 'stepIndex' | 'eventId'>): string =>
  JSON.stringify([step.runId, step.episodeId, step.stepIndex, step.eventId]);

/** `count` steps of distinct identities, from `seed` (the same seed gives the same steps). */
export function distinctSteps(arbitrary: fc.Arbitrary<StepEvent>, count: number, seed: number): StepEvent[] {
  const seen = new Set<string>();
  const steps: StepEvent[] = [];
  for (let round = 0; steps.length < count; round++) {
    for (const step of fc.sample(arbitrary, { numRuns: count, seed: seed + round })) {
      const identity = stepIdentity(step);
      if (seen.has(identity)) continue;
      seen.add(identity);
      steps.push(step);
      if (steps.length === count) break;
    }
  }
  return steps;
}
