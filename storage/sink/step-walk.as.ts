// AssemblyScript (compiled to step-walk.wasm.ts by scripts/build-wasm-kernels.mjs; not part of the tsc build).
//
// The step transcoder's walk (step-transcoder.ts) in WebAssembly: one step's Avro datum → its RowBinary steps
// row, without the Kafka columns (the host appends those). Why: the walk is byte loops — string copies, the
// UTF-8 check, varint token ids — and V8's JS byte loops made the walk a large share of the sink's CPU per
// row (docs/design/wasm-kernels.md). Here a word at a time and without bounds-checked views.
//
// The contract is step-transcoder.ts's: a row is written only for bytes that the decoding path (eventDecoder →
// stepRows → rowBinaryEncoder) accepts and would write as the same bytes; anything else returns -1 and the
// host takes the decoding path. test/storage/sink/step-transcoder.unit.spec.ts holds both paths to the same
// bytes on valid, multi-block and fuzzed events.
//
// Memory: the host copies the datum (the event after its header) to [input, input + length) and leaves
// 4 × length + 64 bytes free from `output` (a row takes at most 4 bytes per datum byte: a 1-byte varint
// becomes an Int32).

const MAX_MAP_ENTRIES: u32 = 64;
// Map entries of the map read last: key start, key end, value position, and the sorted order (u32 each).
const KEY_START: usize = memory.data(4 * MAX_MAP_ENTRIES, 16);
const KEY_END: usize = memory.data(4 * MAX_MAP_ENTRIES, 16);
const VALUE_AT: usize = memory.data(4 * MAX_MAP_ENTRIES, 16);
const ORDER: usize = memory.data(4 * MAX_MAP_ENTRIES, 16);

let pos: usize = 0;
let end: usize = 0;
let out: usize = 0;
let ok: bool = true;

// @ts-ignore: decorator
@inline function fail(): void {
  ok = false;
}

/** A zigzag varint of at most 8 bytes whose unsigned value is ≤ 2^53 (what avsc writes for a long); else fails. */
function readLong(): i64 {
  let n: u64 = 0;
  let shift: u64 = 0;
  for (let i = 0; i < 8; i++) {
    if (pos >= end) {
      fail();
      return 0;
    }
    const b = <u64>load<u8>(pos++);
    n |= (b & 0x7f) << shift;
    if (b < 0x80) {
      if (n > (<u64>1 << 53)) {
        fail();
        return 0;
      }
      return <i64>((n >> 1) ^ (0 - (n & 1)));
    }
    shift += 7;
  }
  fail();
  return 0;
}

/**
 * A non-negative Avro int (token ids, the step index): at most 5 bytes, the value within 32 bits. Up to
 * three bytes (ids below 2^20: every vocabulary) inline, without a loop: this runs for every token id.
 */
// @ts-ignore: decorator
@inline function readCount(): u32 {
  if (pos + 3 <= end) {
    const x = <u32>load<u8>(pos);
    const y = <u32>load<u8>(pos + 1);
    const z = <u32>load<u8>(pos + 2);
    let m: u32 = 0;
    if (x < 0x80) {
      pos += 1;
      m = x;
    } else if (y < 0x80) {
      pos += 2;
      m = (x & 0x7f) | (y << 7);
    } else if (z < 0x80) {
      pos += 3;
      m = (x & 0x7f) | ((y & 0x7f) << 7) | (z << 14);
    } else return readCountSlow();
    if (m & 1) fail(); // negative
    return m >>> 1;
  }
  return readCountSlow();
}

function readCountSlow(): u32 {
  let m: u32 = 0;
  let shift: u32 = 0;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) {
      fail();
      return 0;
    }
    const x = <u32>load<u8>(pos++);
    if (i == 4 && x > 0x0f) {
      fail();
      return 0;
    }
    m |= (x & 0x7f) << shift;
    if (x < 0x80) {
      if (m & 1) fail(); // negative
      return m >>> 1;
    }
    shift += 7;
  }
  fail();
  return 0;
}

/**
 * memory.copy, but short ranges (ids, names, map keys: most strings) a word at a time: V8 runs memory.copy as
 * a call out of the module, which costs more than copying a few dozen bytes here.
 */
// @ts-ignore: decorator
@inline function copyBytes(dst: usize, src: usize, n: usize): void {
  if (n >= 128) {
    memory.copy(dst, src, n);
    return;
  }
  let i: usize = 0;
  for (; i + 8 <= n; i += 8) store<u64>(dst + i, load<u64>(src + i));
  for (; i < n; i++) store<u8>(dst + i, load<u8>(src + i));
}

/** LEB128, as RowBinary prefixes string lengths and array sizes. */
function writeVarUInt(x: u32): void {
  while (x >= 0x80) {
    store<u8>(out++, (x & 0x7f) | 0x80);
    x >>>= 7;
  }
  store<u8>(out++, x);
}

/** Whether [start, stop) is valid UTF-8 (as node's isUtf8: no overlong forms, surrogates or code points above U+10FFFF). */
function validUtf8(start: usize, stop: usize): bool {
  let p = start;
  // ASCII, 8 bytes at a time: most strings are ASCII only.
  while (p + 8 <= stop && (load<u64>(p) & 0x8080808080808080) == 0) p += 8;
  while (p < stop) {
    const c = <u32>load<u8>(p);
    if (c < 0x80) {
      p++;
      continue;
    }
    let need: usize = 0;
    let lo: u32 = 0x80;
    let hi: u32 = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c == 0xe0) lo = 0xa0;
      else if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c == 0xf0) lo = 0x90;
      else if (c == 0xf4) hi = 0x8f;
    } else return false;
    if (p + need >= stop) return false; // fewer than `need` continuation bytes left
    const second = <u32>load<u8>(p + 1);
    if (second < lo || second > hi) return false;
    for (let k: usize = 2; k <= need; k++) {
      const b = <u32>load<u8>(p + k);
      if (b < 0x80 || b > 0xbf) return false;
    }
    p += need + 1;
  }
  return true;
}

/** Reads a string's length prefix; returns its length with pos at its bytes, or -1 (failed) when it does not fit. */
function stringLength(nonEmpty: bool): i64 {
  const len = readLong();
  if (!ok || len < 0 || len > <i64>(end - pos) || (nonEmpty && len == 0)) {
    fail();
    return -1;
  }
  return len;
}

/** A string field: checked, and copied as it is (Avro and RowBinary both write a length, then the UTF-8 bytes). */
function copyString(nonEmpty: bool): void {
  const len = stringLength(nonEmpty);
  if (len < 0) return;
  const n = <usize>len;
  if (!validUtf8(pos, pos + n)) return fail();
  writeVarUInt(<u32>n);
  copyBytes(out, pos, n);
  out += n;
  pos += n;
}

/** A boolean byte: 0 or 1 (avsc reads any non-zero byte as true; such bytes take the decoding path). */
function copyBoolean(): void {
  if (pos >= end) return fail();
  const b = load<u8>(pos++);
  if (b > 1) return fail();
  store<u8>(out++, b);
}

/** Avro array or map blocks: a count, and for a negative count also the block's byte size. Returns the count (0 = end). */
function blockCount(): i64 {
  const n = readLong();
  if (n >= 0) return n;
  readLong(); // the block's size in bytes: not needed to read its items
  return -n;
}

/** Whether the `count` floats at p are log-probs: each finite and ≤ 0 (NaN is not). */
function logProbsValid(p: usize, count: usize): bool {
  let valid = true;
  for (let q = p; q < p + 4 * count; q += 4) {
    const lp = load<f32>(q);
    valid = valid && lp <= 0 && lp > -Infinity;
  }
  return valid;
}

/**
 * One Avro array block of `count` items to `at` as RowBinary items; returns where they end. Token ids
 * (array<int>, each ≥ 0) become Int32s; log-probs (array<float>, each finite and ≤ 0) keep their 4 bytes.
 */
function copyBlock(tokens: bool, at: usize, count: i64): usize {
  // Every token id takes at least a byte, every float 4.
  if ((tokens ? count : 4 * count) > <i64>(end - pos)) {
    fail();
    return at;
  }
  const n = <usize>count;
  if (tokens) {
    for (let i: usize = 0; i < n; i++) store<i32>(at + 4 * i, readCount());
  } else {
    if (!logProbsValid(pos, n)) {
      fail();
      return at;
    }
    memory.copy(at, pos, 4 * n);
    pos += 4 * n;
  }
  return at + 4 * n;
}

/**
 * An array of token ids or log-probs (copyBlock) as a RowBinary Array; returns its item count. avsc writes
 * one block, whose count comes first: its items go straight into place after the count. Several blocks
 * (other writers may split an array) are read again from the array's start into 5 bytes past `out` (room
 * for the longest count prefix) and moved down once the count is known.
 */
function copyArray(tokens: bool): u32 {
  const arrayAt = pos;
  const rowAt = out;
  const first = blockCount();
  if (!ok) return 0;
  writeVarUInt(<u32>first); // a count copyBlock refuses fails the row, so its truncation is never kept
  if (first == 0) return 0;
  out = copyBlock(tokens, out, first);
  if (!ok) return 0;
  if (blockCount() == 0 || !ok) return <u32>first;
  pos = arrayAt;
  out = rowAt;
  const items = out + 5;
  let at = items;
  for (let count = blockCount(); ok && count > 0; count = blockCount()) at = copyBlock(tokens, at, count);
  if (!ok) return 0;
  const n = <u32>((at - items) >> 2);
  writeVarUInt(n);
  memory.copy(out, items, at - items);
  out += at - items;
  return n;
}

function compareKeys(a: u32, b: u32): i32 {
  const sa = load<u32>(KEY_START + 4 * a);
  const sb = load<u32>(KEY_START + 4 * b);
  const la = load<u32>(KEY_END + 4 * a) - sa;
  const lb = load<u32>(KEY_END + 4 * b) - sb;
  const n = la < lb ? la : lb;
  for (let i: u32 = 0; i < n; i++) {
    const d = <i32>load<u8>(sa + i) - <i32>load<u8>(sb + i);
    if (d != 0) return d;
  }
  return <i32>la - <i32>lb;
}

/** "__proto__": avsc builds a plain object, where that key would not be stored as one. */
function isProto(start: usize, len: usize): bool {
  return len == 9 && load<u64>(start) == 0x5f6f746f72705f5f /* "__proto_", little-endian */ && load<u8>(start + 8) == 0x5f;
}

/**
 * An Avro map: its entries into KEY_START / KEY_END / VALUE_AT, sorted into ORDER by key bytes (rows.ts sorts
 * Object.keys; with ASCII keys that is byte order). Non-ASCII and duplicate keys fail (decoding path).
 * Values are doubles (8 bytes) or strings. Returns the entry count.
 */
function readMap(doubles: bool): u32 {
  let n: u32 = 0;
  for (let count = blockCount(); ok && count > 0; count = blockCount()) {
    if (<i64>n + count > <i64>MAX_MAP_ENTRIES || count > <i64>(end - pos)) {
      fail();
      return 0;
    }
    for (let i: i64 = 0; i < count; i++, n++) {
      const len = stringLength(false);
      if (len < 0) return 0;
      const start = pos;
      const stop = pos + <usize>len;
      for (let p = start; p < stop; p++) if (load<u8>(p) >= 0x80) fail(); // non-ASCII keys: decoding path
      if (isProto(start, stop - start)) fail();
      if (!ok) return 0;
      store<u32>(KEY_START + 4 * n, <u32>start);
      store<u32>(KEY_END + 4 * n, <u32>stop);
      pos = stop;
      store<u32>(VALUE_AT + 4 * n, <u32>pos);
      if (doubles) {
        if (pos + 8 > end) {
          fail();
          return 0;
        }
        pos += 8;
      } else {
        const valueLength = stringLength(false);
        if (valueLength < 0) return 0;
        if (!validUtf8(pos, pos + <usize>valueLength)) {
          fail();
          return 0;
        }
        pos += <usize>valueLength;
      }
    }
  }
  if (!ok) return 0;
  for (let i: u32 = 0; i < n; i++) {
    // Insertion sort (maps are small); a duplicate key fails (the last one wins in the decoding path).
    let j = i;
    while (j > 0) {
      const c = compareKeys(load<u32>(ORDER + 4 * (j - 1)), i);
      if (c == 0) {
        fail();
        return 0;
      }
      if (c < 0) break;
      store<u32>(ORDER + 4 * j, load<u32>(ORDER + 4 * (j - 1)));
      j--;
    }
    store<u32>(ORDER + 4 * j, i);
  }
  return n;
}

/** The map read last as RowBinary Array(String) keys, then Array(Float64 | String) values. */
function writeMap(n: u32, doubles: bool): void {
  writeVarUInt(n);
  for (let i: u32 = 0; i < n; i++) {
    const e = load<u32>(ORDER + 4 * i);
    const start = <usize>load<u32>(KEY_START + 4 * e);
    const len = <usize>load<u32>(KEY_END + 4 * e) - start;
    writeVarUInt(<u32>len);
    copyBytes(out, start, len);
    out += len;
  }
  writeVarUInt(n);
  for (let i: u32 = 0; i < n; i++) {
    const at = <usize>load<u32>(VALUE_AT + 4 * load<u32>(ORDER + 4 * i));
    if (doubles) {
      const x = load<f64>(at);
      // rows.ts writes every NaN as "nan", i.e. the canonical NaN
      if (x != x) store<u64>(out, 0x7ff8000000000000);
      else store<u64>(out, load<u64>(at));
      out += 8;
    } else {
      pos = at;
      const len = <usize>readLong();
      writeVarUInt(<u32>len);
      copyBytes(out, pos, len);
      out += len;
    }
  }
}

/**
 * Transcodes the datum [input, input + length) to `output`; returns the row's byte length, or -1 when the
 * decoding path must take the event.
 */
export function transcode(input: usize, length: usize, output: usize): i32 {
  pos = input;
  end = input + length;
  out = output;
  ok = true;
  for (let i = 0; i < 6; i++) copyString(true); // eventId, runId, envName, envVersion, groupId, episodeId
  const stepIndex = readCount();
  if (!ok) return -1;
  store<u32>(out, stepIndex);
  out += 4;
  copyString(false); // observation
  const hasObservationTokens = readLong();
  if (!ok || (hasObservationTokens != 0 && hasObservationTokens != 1)) return -1;
  store<u8>(out++, <u8>hasObservationTokens);
  if (hasObservationTokens) copyArray(true);
  else store<u8>(out++, 0); // an empty array
  if (!ok) return -1;
  copyString(false); // action
  const actionTokens = copyArray(true);
  if (!ok) return -1;
  const logProbs = copyArray(false);
  if (!ok || logProbs != actionTokens) return -1;
  const policyVersion = readLong();
  if (!ok || policyVersion < 0 || pos + 8 > end) return -1;
  const reward = load<f64>(pos);
  if (!isFinite<f64>(reward)) return -1;
  store<i64>(out, policyVersion);
  store<u64>(out + 8, load<u64>(pos));
  out += 16;
  pos += 8;
  copyBoolean(); // terminated
  copyBoolean(); // truncated
  copyBoolean(); // actionValid
  const hasStateKey = readLong();
  if (!ok || (hasStateKey != 0 && hasStateKey != 1)) return -1;
  store<u8>(out++, <u8>(hasStateKey == 0 ? 1 : 0)); // Nullable's flag: 1 = null
  if (hasStateKey == 1) copyString(true);
  if (!ok) return -1;
  const metrics = readMap(true);
  if (!ok) return -1;
  const afterMetrics = pos;
  writeMap(metrics, true);
  pos = afterMetrics;
  const info = readMap(false);
  if (!ok) return -1;
  const afterInfo = pos;
  writeMap(info, false);
  pos = afterInfo;
  const eventTimeMs = readLong();
  // The decoding path's rules (schemas/validate.ts): positive, at most 9999-12-31T23:59:59.999Z; trailing bytes are an error there.
  if (!ok || eventTimeMs <= 0 || eventTimeMs > 253402300799999 || pos != end) return -1;
  store<i64>(out, eventTimeMs);
  out += 8;
  return <i32>(out - output);
}
