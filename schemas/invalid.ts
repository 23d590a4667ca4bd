// Turns an avsc encode failure into an InvalidEventError naming the bad field. Runs only after encode
// has thrown, so the happy path never pays for isValid's walk.
import type { Type } from 'avsc';
import { InvalidEventError } from './errors.js';

interface Found {
  path: string[];
  value: unknown;
  type: Type;
}

export function describeInvalid(event: string, type: Type, value: unknown, cause: unknown): InvalidEventError {
  let found: Found | undefined;
  type.isValid(value, { errorHook: (path, bad, badType) => (found ??= { path, value: bad, type: badType }) });
  if (!found) {
    return new InvalidEventError(event, '', `${event} event could not be encoded: ${(cause as Error)?.message ?? cause}`, { cause });
  }
  const field = formatPath(type, found.path);
  const what = field === '' ? `${event} event` : `${event} event field ${field}`;
  return new InvalidEventError(event, field, `${what} must be ${describeType(found.type)}, got ${preview(found.value)}`, { cause });
}

type Node = Type & { itemsType?: Type; valuesType?: Type; types?: Type[]; fields?: { name: string }[] };

/** avsc gives the path as ['actionLogProbs', '3']; we print `actionLogProbs[3]`, `metrics.loss`, `info["a b"]`. */
export function formatPath(root: Type, parts: string[]): string {
  let node: Node | undefined = root as Node;
  let out = '';
  for (const part of parts) {
    // avsc adds no path part for a union branch: step into the branch that can hold children.
    while (node?.types) node = node.types.find((t) => t.typeName !== 'null') as Node | undefined;
    if (node?.typeName === 'array') {
      out += `[${part}]`;
      node = node.itemsType as Node;
    } else if (node?.typeName === 'map') {
      out += /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`;
      node = node.valuesType as Node;
    } else {
      out += out === '' ? part : `.${part}`;
      const fieldType: Type | undefined = (node as unknown as { field?(name: string): { type: Type } | undefined })?.field?.(part)?.type;
      node = fieldType as Node | undefined;
    }
  }
  return out;
}

function describeType(type: Type): string {
  if (type.name) return `a ${type.name} record`;
  const schema = JSON.stringify(type.schema());
  return schema.length > 80 ? `${schema.slice(0, 77)}...` : schema;
}

function preview(value: unknown): string {
  if (value === undefined) return 'undefined (missing)';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (Buffer.isBuffer(value)) return `a Buffer of ${value.length} bytes`;
  if (value !== null && typeof value === 'object') return 'an object';
  if (typeof value === 'bigint') return `${value}n (a bigint; use a number)`;
  return String(value);
}
