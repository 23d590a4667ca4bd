// The normalized JSON form shared with the Java side (test/interop/java, AvroInterop.java):
// records are objects with their fields in schema order, arrays are arrays, maps are objects with
// sorted keys, bytes and fixed are lower-case hex strings, enums their symbol, unions the plain value
// of the branch (or null), int and long integers, float the float's exact value (Math.fround) as a
// double, double as is (NaN, Infinity, -Infinity as those strings), strings, booleans.
//
// normalize() walks an Avro schema (the parsed .avsc JSON) next to a TypeScript value and returns
// the normalized value; toJson() writes it as JSON text the way Java reads it (keeps -0 and longs
// past 2^53 exact); parseJson() reads Java's output, keeping integers past 2^53 as bigint.

export type Normalized = null | boolean | number | bigint | string | Normalized[] | { [key: string]: Normalized };

type AvroSchema = string | AvroSchema[] | { [key: string]: unknown };

interface Field {
  name: string;
  type: AvroSchema;
  default?: unknown;
}

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/** Named types of a schema, by full name and by short name, for resolving references. */
export class Names {
  private readonly byName = new Map<string, Record<string, unknown>>();

  constructor(schema: AvroSchema) {
    this.collect(schema, '');
  }

  get(name: string, namespace: string): Record<string, unknown> {
    const full = name.includes('.') || namespace === '' ? name : `${namespace}.${name}`;
    const found = this.byName.get(full) ?? this.byName.get(name);
    if (found === undefined) throw new Error(`unknown Avro type name ${name}`);
    return found;
  }

  private collect(schema: AvroSchema, namespace: string): void {
    if (typeof schema === 'string') return;
    if (Array.isArray(schema)) {
      for (const branch of schema) this.collect(branch, namespace);
      return;
    }
    const type = schema['type'];
    if (type === 'record' || type === 'error' || type === 'enum' || type === 'fixed') {
      const name = String(schema['name']);
      const ns = name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : typeof schema['namespace'] === 'string' ? schema['namespace'] : namespace;
      const full = name.includes('.') || ns === '' ? name : `${ns}.${name}`;
      this.byName.set(full, { ...schema, __namespace: ns });
      if (!this.byName.has(name.slice(name.lastIndexOf('.') + 1))) {
        this.byName.set(name.slice(name.lastIndexOf('.') + 1), { ...schema, __namespace: ns });
      }
      if (type === 'record' || type === 'error') {
        for (const field of schema['fields'] as Field[]) this.collect(field.type, ns);
      }
      return;
    }
    if (type === 'array') this.collect(schema['items'] as AvroSchema, namespace);
    else if (type === 'map') this.collect(schema['values'] as AvroSchema, namespace);
    else if (typeof type === 'object' && type !== null) this.collect(type as AvroSchema, namespace);
  }
}

/** Resolves references and `{"type": "long", "logicalType": …}` wrappers to a concrete schema. */
function resolve(schema: AvroSchema, names: Names, namespace: string): { schema: AvroSchema; namespace: string } {
  if (typeof schema === 'string') {
    if (PRIMITIVES.has(schema)) return { schema, namespace };
    const named = names.get(schema, namespace);
    return { schema: named, namespace: String(named['__namespace'] ?? '') };
  }
  if (Array.isArray(schema)) return { schema, namespace };
  const type = schema['type'];
  if (typeof type === 'string' && PRIMITIVES.has(type)) return { schema: type, namespace };
  if (typeof type === 'object' && type !== null) return resolve(type as AvroSchema, names, namespace);
  if (type === 'record' || type === 'error' || type === 'enum' || type === 'fixed') {
    const name = String(schema['name']);
    const named = names.get(name, typeof schema['namespace'] === 'string' ? schema['namespace'] : namespace);
    return { schema: named, namespace: String(named['__namespace'] ?? '') };
  }
  return { schema, namespace };
}

function typeName(schema: AvroSchema): string {
  if (typeof schema === 'string') return schema;
  if (Array.isArray(schema)) return 'union';
  return String(schema['type']);
}

function hex(value: unknown, path: string): string {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  if (typeof value === 'string' && /^([0-9a-f]{2})*$/.test(value)) return value; // already normalized
  throw new Error(`${path}: expected bytes, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function toNumber(value: unknown, path: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
  throw new Error(`${path}: expected a number, got ${describe(value)}`);
}

function special(n: number): number | string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  return n;
}

function integer(value: unknown, path: string, bits: 32 | 64): number | bigint {
  let n: number | bigint;
  if (value instanceof Date) n = value.getTime();
  else if (typeof value === 'number' || typeof value === 'bigint') n = value;
  else throw new Error(`${path}: expected an integer, got ${describe(value)}`);
  if (typeof n === 'number' && !Number.isInteger(n)) throw new Error(`${path}: ${n} is not an integer`);
  const big = BigInt(n);
  const limit = bits === 32 ? 2n ** 31n : 2n ** 63n;
  if (big < -limit || big >= limit) throw new Error(`${path}: ${n} out of range for a ${bits}-bit integer`);
  // Numbers where they are exact, bigint past 2^53 (parseJson does the same with Java's output).
  return Number.isSafeInteger(Number(big)) ? Number(big) : big;
}

function entries(value: unknown, path: string): [string, unknown][] {
  if (value instanceof Map) return [...value.entries()].map(([k, v]) => [String(k), v]);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return Object.entries(value);
  throw new Error(`${path}: expected a map, got ${describe(value)}`);
}

/** Whether a value can stand for a datum of a (non-union) schema: picks union branches. */
function fits(schema: AvroSchema, value: unknown, names: Names, namespace: string): boolean {
  const r = resolve(schema, names, namespace);
  const s = r.schema;
  switch (typeName(s)) {
    case 'null':
      return value === null || value === undefined;
    case 'boolean':
      return typeof value === 'boolean';
    case 'int':
    case 'long':
      return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint' || value instanceof Date;
    case 'float':
    case 'double':
      return typeof value === 'number' || value === 'NaN' || value === 'Infinity' || value === '-Infinity';
    case 'string':
      return typeof value === 'string';
    case 'bytes':
    case 'fixed':
      return value instanceof Uint8Array;
    case 'enum':
      return typeof value === 'string' && ((s as Record<string, unknown>)['symbols'] as string[]).includes(value);
    case 'array':
      return Array.isArray(value);
    case 'map':
      return value instanceof Map || (typeof value === 'object' && value !== null && !Array.isArray(value));
    case 'record':
    case 'error': {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Map) return false;
      const fields = (s as Record<string, unknown>)['fields'] as Field[];
      const known = new Set(fields.map((f) => f.name));
      return Object.keys(value).every((k) => known.has(k));
    }
    default:
      return false;
  }
}

/** The normalized form of `value` as a datum of `schema`; throws with a path when it does not fit. */
export function normalize(schema: AvroSchema, value: unknown, names = new Names(schema), path = '$', namespace = ''): Normalized {
  const r = resolve(schema, names, namespace);
  const s = r.schema;
  const ns = r.namespace;
  switch (typeName(s)) {
    case 'null':
      if (value !== null && value !== undefined) throw new Error(`${path}: expected null, got ${describe(value)}`);
      return null;
    case 'boolean':
      if (typeof value !== 'boolean') throw new Error(`${path}: expected a boolean, got ${describe(value)}`);
      return value;
    case 'int':
      return integer(value, path, 32);
    case 'long':
      return integer(value, path, 64);
    case 'float':
      return special(Math.fround(toNumber(value, path)));
    case 'double':
      return special(toNumber(value, path));
    case 'string':
      if (typeof value !== 'string') throw new Error(`${path}: expected a string, got ${describe(value)}`);
      return value;
    case 'bytes':
    case 'fixed':
      return hex(value, path);
    case 'enum':
      if (typeof value !== 'string') throw new Error(`${path}: expected an enum symbol, got ${describe(value)}`);
      return value;
    case 'array': {
      if (!Array.isArray(value) && !ArrayBuffer.isView(value)) {
        throw new Error(`${path}: expected an array, got ${describe(value)}`);
      }
      const items = (s as Record<string, unknown>)['items'] as AvroSchema;
      return Array.from(value as ArrayLike<unknown>, (item, i) => normalize(items, item, names, `${path}[${i}]`, ns));
    }
    case 'map': {
      const values = (s as Record<string, unknown>)['values'] as AvroSchema;
      const out: { [key: string]: Normalized } = {};
      for (const [k, v] of entries(value, path).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        out[k] = normalize(values, v, names, `${path}[${JSON.stringify(k)}]`, ns);
      }
      return out;
    }
    case 'union': {
      const branches = s as AvroSchema[];
      for (const branch of branches) {
        if (fits(branch, value, names, ns)) return normalize(branch, value, names, path, ns);
      }
      throw new Error(`${path}: ${describe(value)} fits no branch of ${JSON.stringify(branches.map(typeName))}`);
    }
    case 'record':
    case 'error': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new Error(`${path}: expected a record, got ${describe(value)}`);
      }
      const fields = (s as Record<string, unknown>)['fields'] as Field[];
      const known = new Set(fields.map((f) => f.name));
      const extra = Object.keys(value).filter((k) => !known.has(k) && (value as Record<string, unknown>)[k] !== undefined);
      if (extra.length > 0) throw new Error(`${path}: not fields of ${String((s as Record<string, unknown>)['name'])}: ${extra.join(', ')}`);
      const out: { [key: string]: Normalized } = {};
      for (const field of fields) {
        let v = (value as Record<string, unknown>)[field.name];
        if (v === undefined) {
          if (!('default' in field)) throw new Error(`${path}.${field.name}: missing and has no default`);
          v = field.default;
        }
        out[field.name] = normalize(field.type, v, names, `${path}.${field.name}`, ns);
      }
      return out;
    }
    default:
      throw new Error(`${path}: unsupported schema ${describe(s)}`);
  }
}

/** JSON text of a normalized value, as Java reads it: -0 stays -0.0, bigint integers stay exact. */
export function toJson(value: Normalized): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`non-finite number ${value} must be normalized to a string`);
    return Object.is(value, -0) ? '-0.0' : JSON.stringify(value);
  }
  if (typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
    .join(',')}}`;
}

/**
 * Parses JSON text; integer literals past 2^53 become bigint so that longs keep every bit
 * (JSON.parse alone would round them). Numbers with a fraction or exponent stay doubles.
 */
export function parseJson(text: string): Normalized {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw new Error(`JSON: expected ${what} at offset ${i}`);
  };
  const value = (): Normalized => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: { [key: string]: Normalized } = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const key = value();
        if (typeof key !== 'string') fail('a string key');
        ws();
        if (text[i++] !== ':') fail("':'");
        out[key as string] = value();
        ws();
        const sep = text[i++];
        if (sep === '}') return out;
        if (sep !== ',') fail("',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const out: Normalized[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        const sep = text[i++];
        if (sep === ']') return out;
        if (sep !== ',') fail("',' or ']'");
      }
    }
    if (c === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i)) as string;
    }
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i, i + 1100));
    if (literal === null) return fail('a value');
    const token = literal[0];
    i += token.length;
    if (token === 'true') return true;
    if (token === 'false') return false;
    if (token === 'null') return null;
    if (literal[1] === undefined && literal[2] === undefined) {
      const n = Number(token);
      return Number.isSafeInteger(n) ? n : BigInt(token);
    }
    return Number(token);
  };
  const out = value();
  ws();
  if (i !== text.length) fail('the end');
  return out;
}
