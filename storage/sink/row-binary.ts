// Sink rows (rows.ts) as a ClickHouse RowBinary body, directed by the column types ClickHouse reports.
//
// Why RowBinary: for a step row (~90 token ids, ~90 log-probs) printing and parsing numbers as text was most
// of the sink's time (JSON.stringify of the float arrays alone ≈ 20 µs a row); RowBinary writes each number
// as its bytes, and ClickHouse reads it without parsing. The format is the same on 18.16 and current releases.
//
// Conventions of rows.ts carried over: "nan" / "inf" / "-inf" strings in Float columns are those floats;
// Buffers are a String column's raw bytes; booleans are already 0/1. A type this module does not know
// (rowBinaryEncoder returns null) makes the caller fall back to JSONEachRow, so a new column type in a
// migration can never make the sink write wrong bytes.
import type { Cell, Row } from './rows.js';

/** Appends to a growing Buffer; every write reserves its bytes first. */
export class ByteWriter {
  private buf: Buffer;
  private view: DataView;
  pos = 0;

  constructor(initialBytes = 1 << 16) {
    this.buf = Buffer.allocUnsafe(initialBytes);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** A writer holding `bytes` as written (rows another thread wrote: inserts copy ranges of it). */
  static over(bytes: Buffer): ByteWriter {
    const w = new ByteWriter(0);
    w.buf = bytes;
    w.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    w.pos = bytes.length;
    return w;
  }

  reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }

  /** Reserves n bytes and moves past them; returns where they start (the caller fills them through `target`/`targetView`). */
  claim(n: number): number {
    this.reserve(n);
    const at = this.pos;
    this.pos = at + n;
    return at;
  }

  /** The buffer claimed bytes are written into (valid until the next reserve or claim). */
  get target(): Buffer {
    return this.buf;
  }

  /** `target` as a DataView. */
  get targetView(): DataView {
    return this.view;
  }

  u8(x: number): void {
    this.reserve(1);
    this.buf[this.pos++] = x;
  }

  /** LEB128, as RowBinary prefixes string lengths and array sizes. */
  varUInt(x: number): void {
    this.reserve(10);
    while (x >= 0x80) {
      this.buf[this.pos++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.buf[this.pos++] = x;
  }

  int(x: number, bytes: 1 | 2 | 4, signed: boolean): void {
    this.reserve(bytes);
    const v = this.view;
    if (bytes === 1) signed ? v.setInt8(this.pos, x) : v.setUint8(this.pos, x);
    else if (bytes === 2) signed ? v.setInt16(this.pos, x, true) : v.setUint16(this.pos, x, true);
    else signed ? v.setInt32(this.pos, x, true) : v.setUint32(this.pos, x, true);
    this.pos += bytes;
  }

  /** A safe integer as 64-bit little-endian two's complement (the same bytes serve Int64 and UInt64). */
  int64(x: number): void {
    this.reserve(8);
    const high = Math.floor(x / 0x1_0000_0000);
    this.view.setUint32(this.pos, x - high * 0x1_0000_0000, true);
    this.view.setInt32(this.pos + 4, high, true);
    this.pos += 8;
  }

  f32(x: number): void {
    this.reserve(4);
    this.view.setFloat32(this.pos, x, true);
    this.pos += 4;
  }

  f64(x: number): void {
    this.reserve(8);
    this.view.setFloat64(this.pos, x, true);
    this.pos += 8;
  }

  /** A String value: byte length, then the UTF-8 bytes. */
  string(s: string): void {
    const n = s.length;
    // Short ASCII strings (ids, names, keys: most of them) byte by byte: cheaper than a call into
    // Buffer.write. Up to 127 characters the length is one byte.
    if (n < 0x80) {
      this.reserve(1 + n);
      const buf = this.buf;
      const start = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = start + n;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.varUInt(bytes);
    this.reserve(bytes);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /**
   * The first n numbers of xs (default: all) as an array of one fixed-size type, reserved once. One loop per
   * type (not a setter callback): the call in the loop would not be inlined and cost most of the time.
   */
  numbers(xs: ArrayLike<number>, kind: NumberKind, n = xs.length): void {
    this.varUInt(n);
    const bytes = kind === 'Float64' ? 8 : 4;
    this.reserve(n * bytes);
    const view = this.view;
    const at = this.pos;
    if (kind === 'Float32') for (let i = 0; i < n; i++) view.setFloat32(at + 4 * i, xs[i]!, true);
    else if (kind === 'Float64') for (let i = 0; i < n; i++) view.setFloat64(at + 8 * i, xs[i]!, true);
    else if (kind === 'Int32') for (let i = 0; i < n; i++) view.setInt32(at + 4 * i, xs[i]!, true);
    else for (let i = 0; i < n; i++) view.setUint32(at + 4 * i, xs[i]!, true);
    this.pos = at + n * bytes;
  }

  /** A String value from src[start, end): its bytes as they are (the transcoder copies Avro strings so). */
  stringBytes(src: Uint8Array, start: number, end: number): void {
    this.varUInt(end - start);
    this.raw(src, start, end);
  }

  /** The bytes src[start, end) as they are, with no length. */
  raw(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    const buf = this.buf;
    const at = this.pos;
    // Short ranges (ids, keys) byte by byte: a call into native copy costs more than that.
    if (n <= 64) for (let i = 0; i < n; i++) buf[at + i] = src[start + i]!;
    else buf.set(src.subarray(start, end), at);
    this.pos = at + n;
  }

  /** Bytes [start, end) written into another writer (a transcoded row), appended as they are. */
  rangeOf(other: ByteWriter, start: number, end: number): void {
    this.raw(other.buf, start, end);
  }

  bytes(b: Uint8Array): void {
    this.stringBytes(b, 0, b.length);
  }

  /** The bytes written so far (a view; take it once, at the end). */
  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

type NumberKind = 'Float32' | 'Float64' | 'Int32' | 'UInt32';

type Write = (w: ByteWriter, value: Cell | string | number, column: string) => void;

const fail = (column: string, type: string, value: unknown): never => {
  throw new TypeError(`sink row: column ${column} (${type}) cannot hold ${JSON.stringify(value) ?? String(value)}`);
};

const INTEGERS: Record<string, { bytes: 1 | 2 | 4 | 8; min: number; max: number }> = {
  UInt8: { bytes: 1, min: 0, max: 0xff },
  UInt16: { bytes: 2, min: 0, max: 0xffff },
  UInt32: { bytes: 4, min: 0, max: 0xffff_ffff },
  UInt64: { bytes: 8, min: 0, max: Number.MAX_SAFE_INTEGER },
  Int8: { bytes: 1, min: -0x80, max: 0x7f },
  Int16: { bytes: 2, min: -0x8000, max: 0x7fff },
  Int32: { bytes: 4, min: -0x8000_0000, max: 0x7fff_ffff },
  Int64: { bytes: 8, min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
};

/** rows.ts writes non-finite floats as these strings (JSON has no literal for them). */
const SPECIAL_FLOATS: Record<string, number> = { nan: NaN, inf: Infinity, '-inf': -Infinity };

function floatOf(value: unknown, column: string, type: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value in SPECIAL_FLOATS) return SPECIAL_FLOATS[value]!;
  return fail(column, type, value);
}

/** Splits "A, B(C, D), 'x, y'" at top-level commas (outside parentheses and quotes). */
function splitArgs(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === "'") quoted = false;
    } else if (c === "'") quoted = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(list.slice(start).trim());
  return parts;
}

/** Enum8('a' = 1, 'b' = 2) → name → value. */
function enumValues(args: string): Map<string, number> | null {
  const values = new Map<string, number>();
  for (const part of splitArgs(args)) {
    const match = /^'((?:[^'\\]|\\.)*)'\s*=\s*(-?\d+)$/.exec(part);
    if (!match) return null;
    values.set(match[1]!.replace(/\\(.)/g, '$1'), Number(match[2]));
  }
  return values;
}

/** The writer for one ClickHouse type, or null when RowBinary of that type is not implemented here. */
export function typeWriter(type: string): Write | null {
  const outer = /^(\w+)\((.*)\)$/s.exec(type.trim());
  if (!outer) return scalarWriter(type.trim());
  const [, name, args] = outer as unknown as [string, string, string];
  if (name === 'Nullable') {
    const inner = typeWriter(args);
    if (!inner) return null;
    return (w, value, column) => {
      if (value === null) return w.u8(1);
      w.u8(0);
      inner(w, value, column);
    };
  }
  if (name === 'Array') {
    const fast = numberArrayWriter(args.trim(), type);
    if (fast) return fast;
    const inner = typeWriter(args);
    if (!inner) return null;
    return (w, value, column) => {
      if (!Array.isArray(value)) return fail(column, type, value);
      w.varUInt(value.length);
      for (let i = 0; i < value.length; i++) inner(w, value[i] as string | number, column);
    };
  }
  // RowBinary of LowCardinality(T) is T's.
  if (name === 'LowCardinality') return typeWriter(args);
  if (name === 'Enum8' || name === 'Enum16') {
    const values = enumValues(args);
    if (!values) return null;
    const bytes = name === 'Enum8' ? 1 : 2;
    return (w, value, column) => {
      const code = typeof value === 'string' ? values.get(value) : undefined;
      if (code === undefined) return fail(column, type, value);
      w.int(code, bytes, true);
    };
  }
  return null;
}

/**
 * Array(Float32 | Float64 | Int32 | UInt32): the bulk of a step or sample row. Checked in one pass
 * (a non-finite float may come as "nan"/"inf"/"-inf"; ints must be integers in range), written in another.
 */
function numberArrayWriter(inner: string, type: string): Write | null {
  if (inner !== 'Float32' && inner !== 'Float64' && inner !== 'Int32' && inner !== 'UInt32') return null;
  const kind: NumberKind = inner;
  const isFloat = inner.startsWith('Float');
  const { min, max } = INTEGERS[inner] ?? { min: -Infinity, max: Infinity };
  return (w, value, column) => {
    if (!Array.isArray(value)) return fail(column, type, value);
    let xs = value as readonly unknown[];
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i];
      if (typeof x === 'number' && (isFloat || (Number.isInteger(x) && x >= min && x <= max))) continue;
      if (!isFloat) return fail(column, type, x);
      xs = xs.map((y) => floatOf(y, column, type)); // rare: non-finite floats spelled as strings
      break;
    }
    w.numbers(xs as readonly number[], kind);
  };
}

function scalarWriter(type: string): Write | null {
  if (type === 'String') {
    return (w, value, column) => {
      if (typeof value === 'string') w.string(value);
      else if (Buffer.isBuffer(value)) w.bytes(value);
      else fail(column, type, value);
    };
  }
  if (type === 'Float32') return (w, value, column) => w.f32(floatOf(value, column, type));
  if (type === 'Float64') return (w, value, column) => w.f64(floatOf(value, column, type));
  const int = INTEGERS[type];
  if (!int) return null;
  const { bytes, min, max } = int;
  const signed = type.startsWith('Int');
  return (w, value, column) => {
    // Out of range or fractional would wrap silently in binary (text formats reject it): a mapping bug.
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) return fail(column, type, value);
    if (bytes === 8) w.int64(value);
    else w.int(value, bytes, signed);
  };
}

export interface RowBinaryEncoder {
  /** The columns of the INSERT, in body order. */
  readonly columns: readonly string[];
  encode(rows: readonly Row[]): Buffer;
  /** Appends one row (encode is this for every row into a new writer). */
  encodeRow(w: ByteWriter, row: Row): void;
}

/** A writer sized for a batch of rows (a step row is ≈ 1 kB). */
export const batchWriter = (rows: number): ByteWriter => new ByteWriter(Math.max(1 << 16, rows * 1024));

/**
 * An encoder for rows with exactly these columns (in this order), given each column's ClickHouse type;
 * null when a column is missing from `types` or of a type not implemented here.
 */
export function rowBinaryEncoder(columns: readonly string[], types: ReadonlyMap<string, string>): RowBinaryEncoder | null {
  const writers: Write[] = [];
  for (const column of columns) {
    const type = types.get(column);
    const writer = type === undefined ? null : typeWriter(type);
    if (!writer) return null;
    writers.push(writer);
  }
  const encodeRow = (w: ByteWriter, row: Row): void => {
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!;
      const value = row[column];
      if (value === undefined) throw new TypeError(`sink row: no value for column ${column}`);
      writers[i]!(w, value, column);
    }
  };
  return {
    columns,
    encodeRow,
    encode(rows) {
      const w = batchWriter(rows.length);
      for (const row of rows) encodeRow(w, row);
      return w.result();
    },
  };
}
