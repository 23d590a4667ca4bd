// fast-check arbitraries of step events on every edge, for validate-properties.unit.spec.ts and
// test/interop/generated-steps.int.spec.ts: unicode edge cases (lone surrogates, astral characters, NUL, U+FFFD,
// BOM), float extremes (±1e39, float32's largest and smallest, subnormals, -0, NaN, ±Infinity), integers at and
// past int32 and avsc's long limit, long strings, and ids on both sides of the read API's grammar. Each field is
// mostly a value a step may hold and now and then one it may not, so that both outcomes are common. Also a
// walker that finds every string in an Avro datum's bytes.
import fc from 'fast-check';
import type { StepEvent } from '../../schemas/index.js';
import { ID_PATTERN } from '../../schemas/ids.js';

const FLOAT32_MAX = 3.4028234663852886e38;

/** Mostly values the step may hold, now and then one it may not: so that both outcomes are common. */
const mostly = <T>(good: fc.Arbitrary<T>, odd: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.oneof({ weight: 15, arbitrary: good }, { weight: 1, arbitrary: odd });

const WELL_FORMED_EDGES = [
  '\uD83D\uDE00', // 😀, an astral character (a well-formed surrogate pair)
  '\u{10FFFF}',
  '\u0000', // NUL
  '\uFFFD',
  '\uFEFF', // BOM
  'é',
  '"\'\\ /:',
];
const LONE_SURROGATES = ['\uD800', '\uDFFF', '\uDBFF', '\uDC00\uD800' /* a pair in the wrong order */];

const wellFormedText = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...WELL_FORMED_EDGES), fc.string({ unit: 'grapheme', maxLength: 4 }), fc.string({ maxLength: 6 })), { maxLength: 8 })
      .map((parts) => parts.join('')),
  },
  // Long strings: past avsc's one- and two-byte length prefixes and the codec's fast ASCII path.
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', 'é', '\uD83D\uDE00', '\u0000'), fc.integer({ min: 60, max: 5000 })).map(([unit, n]) => unit.repeat(n)) },
);
/** Text with a lone surrogate somewhere, or any UTF-16 code units at all. */
const illFormedText = fc.oneof(
  fc.tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...LONE_SURROGATES), fc.string({ maxLength: 4 })).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }),
);
const oddText: fc.Arbitrary<string> = mostly(wellFormedText, illFormedText);

/** Ids on both sides of the read API's grammar: matching ones (up to 256 characters); 257 characters, spaces, quotes, non-ASCII, odd text. */
const oddId: fc.Arbitrary<string> = mostly(
  fc.oneof(fc.stringMatching(ID_PATTERN), fc.constant(`A${'a'.repeat(255)}`)),
  fc.oneof(fc.constantFrom('a'.repeat(257), "run'1", 'run 1', '-run', '/run', 'r\\1', 'é', ''), oddText),
);

const FLOAT32_HOLDS = [-FLOAT32_MAX, -(2 ** -149), -(2 ** -150), -1e-45, -1e-300, -0, 0, -Number.MIN_VALUE];
const FLOAT32_REFUSES = [-1e39, 1e39, FLOAT32_MAX, -3.4028235e38, -3.4028236e38, Number.NaN, Infinity, -Infinity, -Number.MAX_VALUE, 0.5];
const logProb = mostly(
  fc.oneof(fc.constantFrom(...FLOAT32_HOLDS), fc.double({ min: -60, max: 0, noNaN: true }), fc.float({ min: -60, max: 0, noNaN: true }).map(Math.fround)),
  fc.constantFrom(...FLOAT32_REFUSES),
);
const DOUBLE_EDGES = [-0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 1e39, -1e39];
const finiteDouble = mostly(fc.oneof(fc.constantFrom(...DOUBLE_EDGES), fc.double({ noNaN: true, noDefaultInfinity: true })), fc.constantFrom(Number.NaN, Infinity, -Infinity));
/** Metrics are measurements: NaN and ±Infinity are fine there. */
const measurement = fc.oneof(fc.constantFrom(...DOUBLE_EDGES, Number.NaN, Infinity, -Infinity), fc.double());
const oddInt = mostly(fc.oneof(fc.nat(2 ** 31 - 1), fc.constantFrom(0, 2 ** 31 - 1)), fc.constantFrom(2 ** 31, -1, -(2 ** 31), 2 ** 53, 1.5, Number.NaN));
const oddLong = mostly(fc.oneof(fc.nat(), fc.constant(2 ** 53 - 2)), fc.constantFrom(2 ** 53 - 1, 2 ** 53, -1, 1.5, 1e300));
const oddTime = mostly(fc.oneof(fc.integer({ min: 1, max: 2 ** 45 }), fc.constant(253_402_300_799_999)), fc.constantFrom(0, -5, 253_402_300_800_000, 2 ** 53 - 1, 2 ** 53, 1.5));

/** An action of `n` tokens and n log-probs (sometimes one short, a rule the validator must catch too). */
const action = fc.integer({ min: 0, max: 12 }).chain((n) =>
  fc.record({
    actionTokenIds: fc.array(oddInt, { minLength: n, maxLength: n }),
    actionLogProbs: mostly(fc.array(logProb, { minLength: n, maxLength: n }), fc.array(logProb, { maxLength: 3 })),
  }),
);

export const oddStep: fc.Arbitrary<StepEvent> = fc
  .record({
    eventId: oddId,
    runId: oddId,
    envName: oddText,
    envVersion: oddText,
    groupId: oddId,
    episodeId: oddId,
    stepIndex: oddInt,
    observation: oddText,
    observationTokenIds: fc.option(fc.array(oddInt, { maxLength: 6 }), { nil: null }),
    action: oddText,
    policyVersion: oddLong,
    reward: finiteDouble,
    terminated: fc.boolean(),
    truncated: fc.boolean(),
    actionValid: fc.boolean(),
    stateKey: fc.option(oddText, { nil: null }),
    metrics: fc.dictionary(oddText, measurement, { maxKeys: 3 }),
    info: fc.dictionary(oddText, oddText, { maxKeys: 3 }),
    eventTimeMs: oddTime,
  })
  .chain((fields) => action.map((a): StepEvent => ({ ...fields, ...a })));

// ------------------------------------------------------------------------------ the strings of the bytes

export type AvroType =
  | string
  | readonly AvroType[]
  | { readonly type: string; readonly items?: AvroType; readonly values?: AvroType; readonly fields?: readonly { name: string; type: AvroType }[] };

/** Walks an Avro binary datum of `type`, collecting the bytes of every string (map keys too). */
export function stringsOf(type: AvroType, bytes: Uint8Array, start: number, out: Uint8Array[]): number {
  let pos = start;
  const long = (): number => {
    let n = 0n;
    let shift = 0n;
    for (;;) {
      const b = bytes[pos++]!;
      n |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
    }
    return Number((n >> 1n) ^ -(n & 1n));
  };
  const string = (): void => {
    const len = long();
    out.push(bytes.subarray(pos, pos + len));
    pos += len;
  };
  const walk = (t: AvroType): void => {
    if (Array.isArray(t)) {
      walk(t[long()]!);
      return;
    }
    const name = typeof t === 'string' ? t : (t as { type: string }).type;
    const complex = t as Exclude<AvroType, string | readonly AvroType[]>;
    switch (name) {
      case 'null':
        return;
      case 'boolean':
        pos += 1;
        return;
      case 'int':
      case 'long':
        long();
        return;
      case 'float':
        pos += 4;
        return;
      case 'double':
        pos += 8;
        return;
      case 'string':
        string();
        return;
      case 'record':
        for (const field of complex.fields!) walk(field.type);
        return;
      case 'array':
      case 'map':
        for (let count = long(); count !== 0; count = long()) {
          if (count < 0) {
            count = -count;
            long(); // the block's size in bytes
          }
          for (let i = 0; i < count; i++) {
            if (name === 'map') string();
            walk(name === 'map' ? complex.values! : complex.items!);
          }
        }
        return;
      default:
        throw new Error(`stringsOf: Avro type ${name} is not walked`);
    }
  };
  walk(type);
  return pos;
}
