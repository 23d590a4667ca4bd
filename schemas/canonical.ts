// Parsing Canonical Form of an Avro schema (Avro specification, "Parsing Canonical Form for Schemas").
// Written over the schema's JSON rather than taken from avsc, so that any schema another Avro
// implementation can publish gets the same fingerprint here, even one avsc refuses to parse
// (the spec's own vectors include an empty union and a boolean field whose default is "true").
//
// The transformation rules, in the spec's words:
//   [PRIMITIVES] primitive schemas take their simple form ("int", not {"type":"int"});
//   [FULLNAMES]  names become full names; `namespace` attributes are then dropped;
//   [STRIP]      only type, name, fields, symbols, items, values and size are kept
//                (doc, aliases, default, order, logicalType ... go);
//   [ORDER]      attributes appear in the order name, type, fields, symbols, items, values, size;
//   [STRINGS]    string literals carry no escapes (names and symbols cannot hold characters needing them);
//   [INTEGERS]   integer literals (fixed sizes) are unquoted, without leading zeros;
//   [WHITESPACE] no whitespace outside string literals.
// A named type is written in full at its first occurrence and by full name afterwards (as in Java's
// SchemaNormalization), which is what keeps recursive schemas finite.
import { SchemaError } from './errors.js';

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/** Parsing Canonical Form of a schema given as JSON text. */
export function canonicalFormOfJson(schemaJson: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(schemaJson);
  } catch (err) {
    throw new SchemaError(`schema is not valid JSON: ${(err as Error).message}`);
  }
  return canonicalForm(parsed);
}

/** Parsing Canonical Form of a schema given as parsed JSON (a string, array or object). */
export function canonicalForm(schema: unknown): string {
  return build(schema, '', new Set());
}

function build(schema: unknown, namespace: string, defined: Set<string>): string {
  if (typeof schema === 'string') return reference(schema, namespace, defined);
  if (Array.isArray(schema)) return `[${schema.map((branch) => build(branch, namespace, defined)).join(',')}]`;
  if (schema === null || typeof schema !== 'object') {
    throw new SchemaError(`not an Avro schema: ${JSON.stringify(schema)}`);
  }
  const obj = schema as Record<string, unknown>;
  const type = obj.type;
  if (typeof type !== 'string') return build(type, namespace, defined); // {"type": {...}} or {"type": [...]}
  switch (type) {
    case 'record':
    case 'error':
    case 'enum':
    case 'fixed':
      return named(obj, type, namespace, defined);
    case 'array':
      return `{"type":"array","items":${build(obj.items, namespace, defined)}}`;
    case 'map':
      return `{"type":"map","values":${build(obj.values, namespace, defined)}}`;
    default:
      // A primitive (its logicalType and other attributes stripped) or {"type": "SomeName"}.
      return reference(type, namespace, defined);
  }
}

function named(obj: Record<string, unknown>, type: string, namespace: string, defined: Set<string>): string {
  if (typeof obj.name !== 'string') throw new SchemaError(`${type} schema without a name`);
  const ownNamespace = typeof obj.namespace === 'string' ? obj.namespace : namespace;
  const name = fullName(obj.name, ownNamespace);
  if (defined.has(name)) return JSON.stringify(name);
  defined.add(name);
  const head = `{"name":${JSON.stringify(name)}`;
  if (type === 'enum') {
    const symbols = Array.isArray(obj.symbols) ? obj.symbols : [];
    return `${head},"type":"enum","symbols":[${symbols.map((s) => JSON.stringify(String(s))).join(',')}]}`;
  }
  if (type === 'fixed') {
    const size = Number.parseInt(String(obj.size), 10); // [INTEGERS]: "015" -> 15
    if (!Number.isInteger(size) || size < 0) throw new SchemaError(`fixed ${name} has no valid size`);
    return `${head},"type":"fixed","size":${size}}`;
  }
  // Nested definitions inherit the namespace of the enclosing named type (spec, "Names").
  const inner = namespaceOf(name);
  const fields = Array.isArray(obj.fields) ? obj.fields : [];
  const parts = fields.map((field: unknown) => {
    const f = field as Record<string, unknown>;
    if (typeof f?.name !== 'string') throw new SchemaError(`record ${name} has a field without a name`);
    return `{"name":${JSON.stringify(f.name)},"type":${build(f.type, inner, defined)}}`;
  });
  // "error" is a record in every respect that matters for parsing; Java writes it as "record".
  return `${head},"type":"record","fields":[${parts.join(',')}]}`;
}

function reference(name: string, namespace: string, defined: Set<string>): string {
  if (PRIMITIVES.has(name)) return JSON.stringify(name);
  const qualified = fullName(name, namespace);
  // Like Java's Schema.Names.get: a short name not defined in the enclosing namespace falls back
  // to the null namespace.
  if (!defined.has(qualified) && defined.has(name)) return JSON.stringify(name);
  return JSON.stringify(qualified);
}

function fullName(name: string, namespace: string): string {
  if (name.includes('.') || namespace === '') return name.startsWith('.') ? name.slice(1) : name;
  return `${namespace}.${name}`;
}

function namespaceOf(fullname: string): string {
  const dot = fullname.lastIndexOf('.');
  return dot < 0 ? '' : fullname.slice(0, dot);
}
