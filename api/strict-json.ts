// JSON request bodies read strictly, for POST /v1/steps and POST /v1/replay:
//   * the bytes must be UTF-8 (RFC 8259 §8.1). Buffer#toString and the body parsers replace invalid bytes
//     with U+FFFD, so a client's broken encoding used to be stored as a different string than it sent;
//   * no object may name a key twice. JSON.parse keeps the last value, other parsers the first: a body that
//     two readers read differently (a proxy or a log pipeline checking one value, trajflow storing the other)
//     is refused instead.
// Both are refusals the client can act on, so they say where: the byte offset, the path of the key.
export type StrictJson =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: 'bad-json' | 'duplicate-key'; readonly detail: string; readonly field?: string };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses a JSON body: UTF-8 only, no duplicate keys. */
export function parseStrictJson(raw: Uint8Array): StrictJson {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    const at = firstInvalidUtf8(raw);
    return { ok: false, reason: 'bad-json', detail: `the body is not valid UTF-8: the bytes from offset ${at} (${hex(raw, at)}) are not a UTF-8 character; JSON must be UTF-8` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: 'bad-json', detail: `the body is not valid JSON: ${(error as Error).message}` };
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    return {
      ok: false,
      reason: 'duplicate-key',
      field: duplicate.path,
      detail: `the body names the key ${JSON.stringify(duplicate.key)} twice in one object (at ${duplicate.path}): send each key once`,
    };
  }
  return { ok: true, value };
}

function hex(raw: Uint8Array, at: number): string {
  return Buffer.from(raw.subarray(at, at + 4))
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence (Unicode Table 3-7), or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f; // not a surrogate
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}

interface Frame {
  /** The keys seen so far in an object; null for an array. */
  readonly keys: Set<string> | null;
  /** The last key read (objects) or the index of the current item (arrays): where a child frame sits. */
  key: string;
  index: number;
}

function member(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function pathOf(stack: readonly Frame[], key: string): string {
  let path = '';
  for (let i = 0; i < stack.length - 1; i++) {
    const frame = stack[i]!;
    path += frame.keys === null ? `[${frame.index}]` : member(frame.key);
  }
  path += member(key);
  return path.startsWith('.') ? path.slice(1) : path;
}

/** The index of the quote that closes the string opened at `start`. */
function stringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return end;
  }
}

/**
 * The first key an object of `text` names twice, with its path (`steps[2].reward`), comparing keys as JSON
 * reads them ("a" and "\u0061" are the same key). `text` must be valid JSON: this only walks its structure.
 */
export function findDuplicateKey(text: string): { key: string; path: string } | undefined {
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (expectKey) {
        const raw = text.slice(i, end + 1);
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        const top = stack[stack.length - 1]!;
        if (top.keys!.has(key)) return { key, path: pathOf(stack, key) };
        top.keys!.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b) {
      stack.push({ keys: new Set(), key: '', index: 0 });
      expectKey = true;
    } else if (c === 0x5b) {
      stack.push({ keys: null, key: '', index: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1]!;
      if (top.keys === null) top.index++;
      else expectKey = true;
    }
  }
  return undefined;
}
