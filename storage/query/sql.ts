// SQL literals from already-validated values. These are the only way a value enters a query string:
// integers are checked to be safe integers again, and strings are quoted with ClickHouse's escapes, as a
// second line of defence behind the parameter patterns (ClickHouse 18.16 has no bound parameters).

/** An integer literal; throws on anything that is not a safe integer (a programming error). */
export function sqlInt(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`sqlInt needs a safe integer, got ${value}`);
  return String(value);
}

/** A single-quoted string literal: backslash and quote escaped, control characters as \xHH. */
export function sqlString(value: string): string {
  let out = "'";
  for (const ch of value) {
    if (ch === '\\' || ch === "'") out += `\\${ch}`;
    else if (ch.charCodeAt(0) < 0x20 || ch === '\x7f') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}
