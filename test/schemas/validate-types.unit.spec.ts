// Unit: validateEvent refuses every value its Avro type cannot hold as it is, for every field of every event,
// naming that field. The fields are found by walking each event's current schema (not listed by hand), so a
// field added to a schema without a check fails here. For each leaf of the fixture event (bench/load/events.ts):
//   * int → 2^31 (one past int32), long → 2^53 (past a safe integer), float → ±1e39 (beyond float32: it would
//     be ±Infinity on the wire) and NaN;
//   * string, and the keys of every map → a lone UTF-16 surrogate (UTF-8 cannot encode it; avsc wrote ED A0 80);
// each must be refused with `field` the leaf's path (`steps[0].policyVersion`, `droppedByReason["a:b"]`; the
// map itself for a bad key).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventNames, validateEvent, type EventName, type EventTypes } from '../../schemas/index.js';
import { sampleEvents } from '../../bench/load/events.js';
import { registry } from './helpers.js';

interface AvroComplex {
  readonly type: string;
  readonly items?: AvroType;
  readonly values?: AvroType;
  readonly fields?: readonly { name: string; type: AvroType }[];
}
type AvroType = string | readonly AvroType[] | AvroComplex;

export type LeafKind = 'int' | 'long' | 'float' | 'double' | 'string' | 'boolean' | 'bytes' | 'key';

/** One place in an event a value of `kind` sits, and how to put another value there (in a deep copy). */
export interface Leaf {
  readonly path: string;
  readonly kind: LeafKind;
  /** The event with `value` at this leaf (for 'key': a new map entry whose key is `value`). */
  readonly with: (value: unknown) => unknown;
}

const mapKey = (key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

/** Every leaf of `value` under Avro `type`; arrays through their first item, maps through their first entry (or a new one). */
export function leaves(type: AvroType, value: unknown, path: string, put: (v: unknown) => unknown, out: Leaf[] = []): Leaf[] {
  if (Array.isArray(type)) {
    const branch = (type as readonly AvroType[]).find((t) => t !== 'null') as string | AvroComplex;
    if (value !== null) return leaves(branch, value, path, put, out);
    // A null optional: give it a value of the branch where that is one item (an array, a primitive).
    if (typeof branch === 'string') leaves(branch, undefined, path, put, out);
    else if (branch.type === 'array') leaves(branch.items!, undefined, `${path}[0]`, (v) => put([v]), out);
    return out;
  }
  const t: AvroComplex = typeof type === 'string' ? { type } : (type as AvroComplex);
  switch (t.type) {
    case 'record':
      for (const field of t.fields!) {
        const record = value as Record<string, unknown>;
        leaves(field.type, record[field.name], path === '' ? field.name : `${path}.${field.name}`, (v) => put({ ...record, [field.name]: v }), out);
      }
      return out;
    case 'array': {
      const items = (value ?? []) as unknown[];
      leaves(t.items!, items[0], `${path}[0]`, (v) => put([v, ...items.slice(1)]), out);
      return out;
    }
    case 'map': {
      const map = (value ?? {}) as Record<string, unknown>;
      const first = Object.keys(map)[0];
      const key = first ?? 'k';
      leaves(t.values!, map[key], `${path}${mapKey(key)}`, (v) => put({ ...map, [key]: v }), out);
      out.push({ path, kind: 'key', with: (k) => put({ ...map, [k as string]: first === undefined ? defaultOf(t.values!) : map[first] }) });
      return out;
    }
    default:
      out.push({ path, kind: t.type as LeafKind, with: put });
      return out;
  }
}

function defaultOf(type: AvroType): unknown {
  const name = typeof type === 'string' ? type : Array.isArray(type) ? 'null' : (type as AvroComplex).type;
  return ({ int: 0, long: 0, float: 0, double: 0, string: 'x', boolean: false, null: null } as Record<string, unknown>)[name];
}

export function eventLeaves<N extends EventName>(event: N): Leaf[] {
  const schema = JSON.parse(registry.current(event).schema) as AvroType;
  return leaves(schema, structuredClone(sampleEvents[event]), '', (v) => v);
}

/** The largest finite float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

const BAD: Partial<Record<LeafKind, readonly unknown[]>> = {
  int: [2 ** 31, -(2 ** 31) - 1, 1.5],
  long: [2 ** 53, 2 ** 63, Number.MAX_SAFE_INTEGER],
  float: [-1e39, 1e39, NaN, -Infinity],
  string: ['\uD800', 'ok\uDFFF', '\uDE00\uD83D'],
  key: ['\uDBFF', 'a\uDC00b'],
};

function refusedAt<N extends EventName>(event: N, value: unknown, path: string, what: string): void {
  const result = validateEvent(event, value as EventTypes[N]);
  assert.equal(result.ok, false, `${event}: ${what} at ${path} was accepted`);
  if (!result.ok) assert.equal(result.field, path, `${event}: ${what} at ${path}: ${result.message}`);
}

describe('validateEvent refuses numbers and strings their Avro type cannot hold, naming the field', () => {
  for (const event of eventNames) {
    test(event, () => {
      const found = eventLeaves(event).filter((leaf) => BAD[leaf.kind]);
      assert.ok(found.length > 0);
      for (const leaf of found) for (const bad of BAD[leaf.kind]!) refusedAt(event, leaf.with(bad), leaf.path, `${leaf.kind} ${bad}`);
    });
  }
});

test('float32 extremes that the type holds pass: the largest finite float32, the smallest subnormal, -0', () => {
  const step = sampleEvents.step;
  for (const lp of [-FLOAT32_MAX, -(2 ** -149), -0, 0]) {
    assert.deepEqual(validateEvent('step', { ...step, actionTokenIds: [1], actionLogProbs: [lp] }), { ok: true }, String(lp));
  }
  // avsc's largest long is 2^53 - 2 (it refuses 2^53 - 1, Number.MAX_SAFE_INTEGER).
  assert.deepEqual(validateEvent('step', { ...step, stepIndex: 2 ** 31 - 1, policyVersion: 2 ** 53 - 2 }), { ok: true });
});

test('well-formed text passes: astral characters (surrogate pairs), NUL, U+FFFD, in ids, text and map keys', () => {
  const step = sampleEvents.step;
  const odd = 'a\u0000b \uD83D\uDE00 \uFFFD \u{10FFFF}';
  assert.deepEqual(validateEvent('step', { ...step, observation: odd, action: odd, envName: odd, stateKey: odd, metrics: { [odd]: 1 }, info: { [odd]: odd } }), { ok: true });
});

test('the finding: a lone surrogate in the observation is refused naming it, the message escaping it', () => {
  const result = validateEvent('step', { ...sampleEvents.step, observation: 'before \uD800 after' });
  assert.equal(result.ok, false);
  if (!result.ok) {
    assert.equal(result.field, 'observation');
    assert.match(result.message, /lone UTF-16 surrogate \(\\ud800\) at index 7/);
    assert.doesNotMatch(result.message, /[\uD800-\uDFFF]/u, 'the message itself is well-formed (it may end up in a dead letter)');
  }
});

test('the finding: a log-prob of -1e39 (below float32) is refused naming it', () => {
  const result = validateEvent('step', { ...sampleEvents.step, actionTokenIds: [1, 2], actionLogProbs: [-0.5, -1e39] });
  assert.equal(result.ok, false);
  if (!result.ok) {
    assert.equal(result.field, 'actionLogProbs[1]');
    assert.match(result.message, /float32/);
  }
});
