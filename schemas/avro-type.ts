// How trajflow builds avsc types. Three changes to avsc's defaults, all on types we construct (avsc
// itself is not patched; other users of avsc in the process are unaffected):
//
// 1. Array and map block counts are bounded, so a corrupt count fails fast instead of looping for
//    hours; array<int> and array<float> get inlined fast paths (both in avro-arrays.ts), and ASCII
//    strings skip avsc's Buffer.byteLength (avro-strings.ts).
// 2. Records decode to plain objects (prototype Object.prototype), not instances of avsc's generated
//    record classes, so decoded events compare equal (assert.deepStrictEqual) to literals, and spread,
//    JSON and structuredClone behave as for any object. Record methods are omitted.
// 3. Each schema gets its own name registry, so versions of one record never clash.
//
// They rely on avsc 5.7 internals; test/schemas/codec-errors.unit.spec.ts and the round-trip tests
// fail if an avsc upgrade breaks them.
import avsc from 'avsc';
import { LITTLE_ENDIAN, readArray, readFloatArray, readIntArray, readMap, skipArray, skipMap, writeFloatArray, writeIntArray, zeroSizeItems } from './avro-arrays.js';

import { readString, writeMap, writeString } from './avro-strings.js';

export { CorruptBlockError } from './avro-arrays.js';

type TypeClass = new (schema: unknown, opts: unknown) => avsc.Type;
const { ArrayType, MapType, StringType } = avsc.types as unknown as { ArrayType: TypeClass; MapType: TypeClass; StringType: TypeClass };

class BoundedArrayType extends ArrayType {
  constructor(schema: unknown, opts: unknown) {
    super(schema, opts);
    if (minEncodedSize((this as unknown as { itemsType: avsc.Type }).itemsType) === 0) zeroSizeItems.add(this);
  }
}
Object.assign(BoundedArrayType.prototype, { _read: readArray, _skip: skipArray });

class IntArrayType extends BoundedArrayType {}
Object.assign(IntArrayType.prototype, { _read: readIntArray, _write: writeIntArray });

class FloatArrayType extends BoundedArrayType {}
Object.assign(FloatArrayType.prototype, { _read: readFloatArray, _write: writeFloatArray });

class BoundedMapType extends MapType {}
Object.assign(BoundedMapType.prototype, { _read: readMap, _skip: skipMap, _write: writeMap });

class FastStringType extends StringType {}
Object.assign(FastStringType.prototype, { _read: readString, _write: writeString });

/** Smallest number of bytes a value of the type can encode to (0 for null and records of nulls). */
function minEncodedSize(type: avsc.Type, seen = new Set<avsc.Type>()): number {
  if (seen.has(type)) return 1; // a recursive record needs a union index somewhere to end
  seen.add(type);
  const t = type as avsc.Type & { fields?: { type: avsc.Type }[]; size?: number; underlyingType?: avsc.Type };
  switch (type.typeName) {
    case 'null':
      return 0;
    case 'record':
    case 'error':
      return (t.fields ?? []).reduce((sum, field) => sum + minEncodedSize(field.type, seen), 0);
    case 'fixed':
      return t.size ?? 0;
    default:
      return t.underlyingType ? minEncodedSize(t.underlyingType, seen) : 1;
  }
}

/** The primitive an items schema names, if it is a plain primitive ('int' or {"type": "int"}). */
function primitiveOf(schema: unknown): string | undefined {
  if (typeof schema === 'string') return schema;
  if (schema !== null && typeof schema === 'object' && !Array.isArray(schema)) {
    const { type, logicalType } = schema as { type?: unknown; logicalType?: unknown };
    if (typeof type === 'string' && logicalType === undefined) return type;
  }
  return undefined;
}

function typeHook(schema: unknown, opts: unknown): avsc.Type | undefined {
  if (primitiveOf(schema) === 'string') return new FastStringType(schema, opts);
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return undefined;
  const { type, items } = schema as { type?: unknown; items?: unknown };
  if (type === 'map') return new BoundedMapType(schema, opts);
  if (type !== 'array') return undefined;
  const itemType = primitiveOf(items);
  if (itemType === 'int') return new IntArrayType(schema, opts);
  if (itemType === 'float' && LITTLE_ENDIAN) return new FloatArrayType(schema, opts);
  return new BoundedArrayType(schema, opts);
}

/** Builds the avsc type of a parsed schema: bounded block counts, fast number arrays, plain-object records. */
export function createAvroType(schema: unknown): avsc.Type {
  const type = avsc.Type.forSchema(schema as avsc.Schema, { omitRecordMethods: true, typeHook, registry: {} });
  makeRecordsPlain(type, new Set());
  return type;
}

function makeRecordsPlain(type: avsc.Type, seen: Set<avsc.Type>): void {
  if (seen.has(type)) return;
  seen.add(type);
  const t = type as avsc.Type & {
    fields?: { type: avsc.Type }[];
    recordConstructor?: { prototype: object };
    itemsType?: avsc.Type;
    valuesType?: avsc.Type;
    types?: avsc.Type[];
    underlyingType?: avsc.Type;
  };
  // `new Record(...)` takes its prototype from Record.prototype at call time.
  if (t.recordConstructor) t.recordConstructor.prototype = Object.prototype;
  const children = [...(t.fields ?? []).map((field) => field.type), ...(t.types ?? []), t.itemsType, t.valuesType, t.underlyingType];
  for (const child of children) if (child) makeRecordsPlain(child, seen);
}
