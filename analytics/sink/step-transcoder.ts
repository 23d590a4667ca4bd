// Step events straight from their Avro bytes into RowBinary steps rows, without building the event or the row.
//
// Why: steps are nearly every row the sink writes, and decoding each into an object (strings, arrays, maps),
// mapping it to a row object and walking that again to encode it cost ≈ 20 µs a row on the 2-core VM, with
// the GC behind it. The Avro datum of a step already holds its fields in the order of the steps table's
// columns, mostly in the same bytes: strings are a length then UTF-8 either way, floats 4 little-endian
// bytes, doubles 8. So the sink walks each datum once, on arrival, writing its row into a shared chunk
// (StepChunks), and an insert copies the rows' byte ranges.
//
// It is an optimisation only, never a second definition of a step: `transcodeStep` writes a row only for
// bytes that eventDecoder (codec.decode + validateEvent) accepts AND that stepRows + rowBinaryEncoder would
// write byte for byte the same. Everything else (another writer schema, a failed check, an unusual shape:
// boolean bytes above 1, over-long varints, non-ASCII map keys, duplicate keys, invalid UTF-8 ...) is
// declined (false, nothing written) and takes the decoding path, which then stores the row or gives the
// dead-letter reason exactly as before. test/analytics/sink/step-transcoder.unit.spec.ts holds the two paths
// to the same bytes, on valid events and on corrupted ones.
import { isUtf8 } from 'node:buffer';
import { ByteWriter } from './row-binary.js';
import type { KafkaSource } from './rows.js';

/** A steps row already in RowBinary: bytes [start, end) of a chunk; `avro` is the event it came from, `source` where (the sink passes the envelope it acks). */
export class TranscodedStep<S extends KafkaSource = KafkaSource> {
  constructor(
    readonly chunk: ByteWriter,
    readonly start: number,
    readonly end: number,
    readonly avro: Buffer,
    readonly source: S,
  ) {}
}

/** The steps row's columns in stepRows' order (which is the Avro field order) and the types the transcoder writes. */
export const STEP_COLUMN_TYPES: ReadonlyMap<string, string> = new Map([
  ['event_id', 'String'],
  ['run_id', 'String'],
  ['env_name', 'String'],
  ['env_version', 'String'],
  ['group_id', 'String'],
  ['episode_id', 'String'],
  ['step_index', 'UInt32'],
  ['observation', 'String'],
  ['has_observation_token_ids', 'UInt8'],
  ['observation_token_ids', 'Array(Int32)'],
  ['action', 'String'],
  ['action_token_ids', 'Array(Int32)'],
  ['action_log_probs', 'Array(Float32)'],
  ['policy_version', 'Int64'],
  ['reward', 'Float64'],
  ['terminated', 'UInt8'],
  ['truncated', 'UInt8'],
  ['action_valid', 'UInt8'],
  ['state_key', 'Nullable(String)'],
  ['metrics_keys', 'Array(String)'],
  ['metrics_values', 'Array(Float64)'],
  ['info_keys', 'Array(String)'],
  ['info_values', 'Array(String)'],
  ['event_time_ms', 'Int64'],
  ['kafka_topic', 'String'],
  ['kafka_partition', 'Int32'],
  ['kafka_offset', 'Int64'],
]);

export const STEP_COLUMNS: readonly string[] = [...STEP_COLUMN_TYPES.keys()];

/** True when ClickHouse's types of the steps columns are the ones the transcoder writes (LowCardinality(T) writes as T). */
export function stepTypesMatch(types: ReadonlyMap<string, string>): boolean {
  for (const [column, type] of STEP_COLUMN_TYPES) {
    const actual = types.get(column)?.replace(/^LowCardinality\((.*)\)$/, '$1');
    if (actual !== type) return false;
  }
  return true;
}

const MAX_MAP_ENTRIES = 64;

function grown(old: Int32Array, next: Int32Array): Int32Array {
  next.set(old);
  return next;
}

/** The walk over one datum; one instance, reused (its scratch arrays keep their size from step to step). */
class StepWalker {
  buf: Buffer = Buffer.alloc(0);
  pos = 0;
  ok = true;
  /** Where the bytes of the string read last begin (after its length prefix). */
  strStart = 0;
  /** The datum's bytes as a DataView, for its floats and doubles (Buffer#readFloatLE costs ≈ 20 ns here). */
  view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  ints: Int32Array = new Int32Array(256);
  /** Start and item count of each block of the float array read last. */
  readonly blockStart: number[] = [];
  readonly blockItems: number[] = [];
  // Map entries: where each key's bytes are, and the value's position.
  readonly keyStart: number[] = [];
  readonly keyEnd: number[] = [];
  readonly valueAt: number[] = [];
  readonly order: number[] = [];

  /** A zigzag varint as an integer of at most 2^52; else (or past the end) sets ok = false. */
  readLong(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.buf.length) return (this.ok = false), 0;
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) {
        // zigzag: even → n/2, odd → -(n+1)/2; n < 2^56 here, and the sum exact while n ≤ 2^53
        // (|value| ≤ 2^52: what avsc writes for a long).
        if (n > 2 ** 53) return (this.ok = false), 0;
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      scale *= 128;
    }
    return (this.ok = false), 0;
  }

  /**
   * A non-negative Avro int (token ids, step index): a zigzag varint of at most 5 bytes whose value fits 32
   * bits, as avro-arrays.ts reads token ids; anything else sets ok = false. Locals and bit operations: this
   * runs for every token id.
   */
  readCount(): number {
    const b = this.buf;
    let p = this.pos;
    if (p + 5 > b.length) return this.readCountNearEnd();
    let x = b[p++]!;
    let m = x & 0x7f;
    if (x >= 0x80) {
      x = b[p++]!;
      m |= (x & 0x7f) << 7;
      if (x >= 0x80) {
        x = b[p++]!;
        m |= (x & 0x7f) << 14;
        if (x >= 0x80) {
          x = b[p++]!;
          m |= (x & 0x7f) << 21;
          if (x >= 0x80) {
            x = b[p++]!;
            if (x > 0x0f) this.ok = false;
            m = (m | (x << 28)) >>> 0;
          }
        }
      }
    }
    this.pos = p;
    if (m & 1) this.ok = false; // negative
    return m >>> 1;
  }

  /** readCount within 5 bytes of the end: the same, byte by byte with bounds checks. */
  readCountNearEnd(): number {
    let m = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.buf.length) return (this.ok = false), 0;
      const x = this.buf[this.pos++]!;
      if (shift === 28 && x > 0x0f) return (this.ok = false), 0;
      m += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) {
        if (m % 2 === 1) this.ok = false;
        return Math.floor(m / 2);
      }
    }
    return (this.ok = false), 0;
  }

  /** Reads a string's length prefix: sets strStart, returns the end of its bytes (pos stays at strStart). */
  stringEnd(nonEmpty: boolean): number {
    const len = this.readLong();
    this.strStart = this.pos;
    const end = this.pos + len;
    if (len < 0 || end > this.buf.length || (nonEmpty && len === 0)) return (this.ok = false), this.pos;
    this.checkUtf8(this.strStart, end);
    return end;
  }

  /** Sets ok = false when bytes [start, end) are not valid UTF-8 (avsc decodes invalid UTF-8 into U+FFFD: the row would hold other bytes than the event's). */
  checkUtf8(start: number, end: number): void {
    const buf = this.buf;
    for (let i = start; i < end; i++) {
      if (buf[i]! >= 0x80) {
        if (!isUtf8(buf.subarray(start, end))) this.ok = false;
        return;
      }
    }
  }

  /**
   * A string field, copied as it is (Avro and RowBinary both write a length, then the UTF-8 bytes). Strings
   * under 128 bytes (ids, names: most of them) are checked and copied in one pass, their RowBinary length
   * one byte; longer ones are scanned, then copied natively.
   */
  string(w: ByteWriter, nonEmpty: boolean): void {
    const buf = this.buf;
    const len = this.readLong();
    const start = this.pos;
    const end = start + len;
    if (!this.ok || len < 0 || end > buf.length || (nonEmpty && len === 0)) return void (this.ok = false);
    if (len >= 0x80) {
      this.checkUtf8(start, end);
      w.stringBytes(buf, start, end);
      this.pos = end;
      return;
    }
    const at = w.claim(1 + len);
    const out = w.target;
    out[at] = len;
    let high = 0;
    for (let i = 0; i < len; i++) {
      const c = buf[start + i]!;
      high |= c;
      out[at + 1 + i] = c;
    }
    if (high >= 0x80 && !isUtf8(buf.subarray(start, end))) this.ok = false;
    this.pos = end;
  }

  /** A boolean byte: 0 or 1 (avsc reads any non-zero byte as true; such bytes take the decoding path). */
  boolean(w: ByteWriter): void {
    if (this.pos >= this.buf.length) return void (this.ok = false);
    const b = this.buf[this.pos++]!;
    if (b > 1) return void (this.ok = false);
    w.u8(b);
  }

  /** Avro array blocks: a count, and for a negative count also the block's byte size. Returns the count (0 = end). */
  blockCount(): number {
    const n = this.readLong();
    if (n >= 0) return n;
    this.readLong(); // the block's size in bytes: not needed to read its items
    return -n;
  }

  /** array<int> of token ids (each ≥ 0) into ints[0..n); returns n. */
  tokenIds(): number {
    let n = 0;
    for (let count = this.blockCount(); this.ok && count > 0; count = this.blockCount()) {
      if (count > this.buf.length - this.pos) return (this.ok = false), 0; // every item takes at least a byte
      if (n + count > this.ints.length) this.ints = grown(this.ints, new Int32Array(Math.max(n + count, 2 * this.ints.length)));
      for (let i = 0; i < count; i++) this.ints[n++] = this.readCount();
    }
    return n;
  }

  /**
   * array<int> of token ids (each ≥ 0) written straight into w as a RowBinary Array(Int32); returns the count.
   * avsc writes one block: its items are decoded into place. Several blocks take tokenIds' two passes.
   */
  tokenIdsInto(w: ByteWriter): number {
    const arrayStart = this.pos;
    const writerStart = w.pos;
    const count = this.blockCount();
    if (!this.ok) return 0;
    if (count === 0) return w.u8(0), 0;
    if (count > this.buf.length - this.pos) return (this.ok = false), 0; // every item takes at least a byte
    w.varUInt(count);
    const at = w.claim(4 * count);
    const view = w.targetView;
    for (let i = 0; i < count; i++) view.setInt32(at + 4 * i, this.readCount(), true);
    if (!this.ok) return 0;
    if (this.blockCount() === 0 || !this.ok) return count;
    this.pos = arrayStart;
    w.pos = writerStart;
    const n = this.tokenIds();
    w.numbers(this.ints, 'Int32', n);
    return n;
  }

  /** array<float> of log-probs (each finite and ≤ 0): its blocks into blockStart/blockItems; returns the block count. */
  logProbBlocks(): number {
    let blocks = 0;
    const view = this.view;
    for (let count = this.blockCount(); this.ok && count > 0; count = this.blockCount()) {
      const start = this.pos;
      if (count * 4 > this.buf.length - start) return (this.ok = false), 0;
      for (let p = start; p < start + 4 * count; p += 4) {
        const lp = view.getFloat32(p, true);
        if (!(lp <= 0 && lp > -Infinity)) this.ok = false;
      }
      this.blockStart[blocks] = start;
      this.blockItems[blocks++] = count;
      this.pos = start + 4 * count;
    }
    return blocks;
  }

  /**
   * An Avro map into keyStart/keyEnd/valueAt, sorted into `order` by key (rows.ts sorts Object.keys; with
   * ASCII keys that is byte order). Returns the entry count. Values are doubles (8 bytes) or strings.
   */
  mapEntries(doubles: boolean): number {
    let n = 0;
    for (let count = this.blockCount(); this.ok && count > 0; count = this.blockCount()) {
      if (n + count > MAX_MAP_ENTRIES || count > this.buf.length - this.pos) return (this.ok = false), 0;
      for (let i = 0; i < count && this.ok; i++, n++) {
        const end = this.stringEnd(false);
        if (!this.ok) return 0;
        const start = this.strStart;
        for (let j = start; j < end; j++) if (this.buf[j]! >= 0x80) this.ok = false; // non-ASCII keys: decoding path
        // An object key: "__proto__" would not be stored as one (avsc builds a plain object).
        if (end - start === 9 && this.buf.toString('latin1', start, end) === '__proto__') this.ok = false;
        this.keyStart[n] = start;
        this.keyEnd[n] = end;
        this.pos = end;
        this.valueAt[n] = this.pos;
        if (doubles) {
          if (this.pos + 8 > this.buf.length) return (this.ok = false), 0;
          this.pos += 8;
        } else {
          this.pos = this.stringEnd(false);
        }
      }
    }
    if (!this.ok) return 0;
    for (let i = 0; i < n; i++) {
      // Insertion sort by key bytes (maps are small); a duplicate key: decoding path (the last one wins there).
      let j = i;
      while (j > 0) {
        const c = this.compareKeys(this.order[j - 1]!, i);
        if (c === 0) return (this.ok = false), 0;
        if (c < 0) break;
        this.order[j] = this.order[j - 1]!;
        j--;
      }
      this.order[j] = i;
    }
    return n;
  }

  compareKeys(a: number, b: number): number {
    const la = this.keyEnd[a]! - this.keyStart[a]!;
    const lb = this.keyEnd[b]! - this.keyStart[b]!;
    const n = Math.min(la, lb);
    for (let i = 0; i < n; i++) {
      const d = this.buf[this.keyStart[a]! + i]! - this.buf[this.keyStart[b]! + i]!;
      if (d !== 0) return d;
    }
    return la - lb;
  }

  writeMap(w: ByteWriter, n: number, doubles: boolean): void {
    w.varUInt(n);
    for (let i = 0; i < n; i++) w.stringBytes(this.buf, this.keyStart[this.order[i]!]!, this.keyEnd[this.order[i]!]!);
    w.varUInt(n);
    for (let i = 0; i < n; i++) {
      const at = this.valueAt[this.order[i]!]!;
      if (doubles) {
        const x = this.view.getFloat64(at, true);
        w.f64(x === x ? x : NaN); // rows.ts writes every NaN as "nan", i.e. the canonical NaN
      } else {
        this.pos = at;
        const end = this.stringEnd(false);
        w.stringBytes(this.buf, this.strStart, end);
      }
    }
  }

  /**
   * Walks one step datum (after the 10-byte header), writing its row into w. Returns whether the bytes are a
   * valid step this module handles; on false, w holds part of a row (transcodeStep rolls it back).
   */
  walk(bytes: Buffer, w: ByteWriter, source: KafkaSource): boolean {
    this.buf = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.pos = 10;
    this.ok = true;
    for (let i = 0; i < 6; i++) this.string(w, true); // eventId, runId, envName, envVersion, groupId, episodeId
    const stepIndex = this.readCount();
    if (!this.ok) return false;
    w.int(stepIndex, 4, false);
    this.string(w, false); // observation
    const hasObservationTokens = this.readLong();
    if (hasObservationTokens !== 0 && hasObservationTokens !== 1) return false;
    w.u8(hasObservationTokens);
    if (hasObservationTokens) this.tokenIdsInto(w);
    else w.u8(0); // an empty array
    if (!this.ok) return false;
    this.string(w, false); // action
    const actionTokens = this.tokenIdsInto(w);
    if (!this.ok) return false;
    const blocks = this.logProbBlocks();
    if (!this.ok) return false;
    let logProbs = 0;
    for (let i = 0; i < blocks; i++) logProbs += this.blockItems[i]!;
    if (logProbs !== actionTokens) return false;
    // Avro floats are RowBinary's Float32 bytes: copied as they are.
    w.varUInt(logProbs);
    for (let i = 0; i < blocks; i++) w.raw(bytes, this.blockStart[i]!, this.blockStart[i]! + 4 * this.blockItems[i]!);
    const policyVersion = this.readLong();
    if (!this.ok || policyVersion < 0 || this.pos + 8 > bytes.length) return false;
    const reward = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    if (!Number.isFinite(reward)) return false;
    w.int64(policyVersion);
    w.f64(reward);
    this.boolean(w); // terminated
    this.boolean(w); // truncated
    this.boolean(w); // actionValid
    const hasStateKey = this.readLong();
    if (!this.ok || (hasStateKey !== 0 && hasStateKey !== 1)) return false;
    w.u8(hasStateKey === 0 ? 1 : 0); // Nullable's flag: 1 = null
    if (hasStateKey === 1) this.string(w, true);
    if (!this.ok) return false;
    const metrics = this.mapEntries(true);
    if (!this.ok) return false;
    const afterMetrics = this.pos;
    this.writeMap(w, metrics, true);
    this.pos = afterMetrics;
    const info = this.mapEntries(false);
    if (!this.ok) return false;
    const afterInfo = this.pos;
    this.writeMap(w, info, false);
    this.pos = afterInfo;
    const eventTimeMs = this.readLong();
    if (!this.ok || eventTimeMs <= 0 || this.pos !== bytes.length) return false; // trailing bytes are an error there
    w.int64(eventTimeMs);
    w.string(source.topic);
    w.int(source.partition, 4, true);
    w.int64(Number(source.offset));
    return true;
  }
}

const walker = new StepWalker();

/**
 * Writes the steps row of `bytes` (a whole single-object event) into w and returns true, when they are a step
 * written with `header` (the current step schema's marker and fingerprint) that eventDecoder accepts and
 * that the decoding path would write as these bytes. Otherwise returns false with w as it was.
 */
export function transcodeStep(w: ByteWriter, bytes: Buffer, source: KafkaSource, header: Buffer, maxEventBytes: number): boolean {
  if (bytes.length > maxEventBytes || bytes.length < header.length) return false;
  for (let i = 0; i < header.length; i++) if (bytes[i] !== header[i]) return false;
  const start = w.pos;
  if (walker.walk(bytes, w, source)) return true;
  w.pos = start;
  return false;
}

/** Chunks of this many bytes hold the rows (a row larger than that grows a chunk of its own). */
const CHUNK_BYTES = 1 << 20;

/**
 * The sink's transcoded steps rows, in chunks: rows are appended to the current chunk, and a full chunk is
 * left to the rows that point into it (it is freed with the last of them).
 */
export class StepChunks {
  private chunk = new ByteWriter(CHUNK_BYTES);

  constructor(
    private readonly header: Buffer,
    private readonly maxEventBytes: number,
  ) {}

  /** The row of a step, or null when the decoding path must take it (see transcodeStep). */
  transcode<S extends KafkaSource>(bytes: Buffer, source: S): TranscodedStep<S> | null {
    // A row is at most 4 bytes per Avro byte (a 1-byte varint becomes an Int32) plus the Kafka columns: a
    // new chunk when this one might not hold it (growing a chunk would copy it).
    if (this.chunk.pos > 0 && this.chunk.pos + 4 * bytes.length + 2 * source.topic.length + 64 > CHUNK_BYTES) this.chunk = new ByteWriter(CHUNK_BYTES);
    const chunk = this.chunk;
    const start = chunk.pos;
    if (!transcodeStep(chunk, bytes, source, this.header, this.maxEventBytes)) return null;
    return new TranscodedStep(chunk, start, chunk.pos, bytes, source);
  }
}
