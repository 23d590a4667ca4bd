// Step events straight from their Avro bytes into RowBinary steps rows, without building the event or the row.
//
// Why: steps are nearly every row the sink writes, and decoding each into an object (strings, arrays, maps),
// mapping it to a row object and walking that again to encode it cost several times what walking the bytes
// once does, with the GC behind it. The Avro datum of a step already holds its fields in the order of the
// steps table's columns, mostly in the same bytes: strings are a length then UTF-8 either way, floats 4
// little-endian bytes, doubles 8. So the sink walks each datum once, on arrival, writing its row into a shared chunk
// (StepChunks), and an insert copies the rows' byte ranges. The walk itself runs in WebAssembly
// (step-walk.as.ts), where its byte loops cost a fraction of V8's (docs/design/wasm-kernels.md).
//
// It is an optimisation only, never a second definition of a step: `transcodeStep` writes a row only for
// bytes that eventDecoder (codec.decode + validateEvent) accepts AND that stepRows + rowBinaryEncoder would
// write byte for byte the same. Everything else (another writer schema, a failed check, an unusual shape:
// boolean bytes above 1, over-long varints, non-ASCII map keys, duplicate keys, invalid UTF-8 ...) is
// declined (false, nothing written) and takes the decoding path, which then stores the row or gives the
// dead-letter reason exactly as before. test/storage/sink/step-transcoder.unit.spec.ts holds the two paths
// to the same bytes, on valid events and on corrupted ones.
import { ByteWriter } from './row-binary.js';
import type { KafkaSource } from './rows.js';
import { STEP_WALK_WASM_BASE64 } from './step-walk.wasm.js';

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

/** Where the host puts a datum in the walk's memory (its static data lies below, and the header just before). */
const INPUT = 1 << 16;

/**
 * The walk over a datum, in WebAssembly (step-walk.as.ts, compiled into step-walk.wasm.ts). One instance
 * per thread, made at first use; its memory grows to the largest event seen.
 */
class StepWalk {
  private readonly memory: WebAssembly.Memory;
  private bytes: Uint8Array;
  private readonly run: (input: number, length: number, output: number) => number;

  constructor() {
    const module = new WebAssembly.Module(Buffer.from(STEP_WALK_WASM_BASE64, 'base64'));
    const instance = new WebAssembly.Instance(module, {
      env: {
        abort: () => {
          throw new Error('step-walk.wasm aborted');
        },
      },
    });
    this.memory = instance.exports.memory as WebAssembly.Memory;
    this.run = instance.exports.transcode as StepWalk['run'];
    this.bytes = new Uint8Array(this.memory.buffer);
  }

  /**
   * Writes the steps row of a whole event (header included) into w, without the Kafka columns; returns
   * whether the walk accepted it. On false, w holds what it held.
   */
  walk(event: Buffer, headerBytes: number, w: ByteWriter): boolean {
    const length = event.length - headerBytes;
    const output = (INPUT + length + 7) & ~7;
    const needed = output + 4 * length + 64;
    if (needed > this.bytes.length) {
      this.memory.grow(Math.ceil((needed - this.bytes.length) / 65536));
      this.bytes = new Uint8Array(this.memory.buffer);
    }
    // The whole event, so that its datum starts at INPUT (a subarray would cost an object per step).
    this.bytes.set(event, INPUT - headerBytes);
    const n = this.run(INPUT, length, output);
    if (n < 0) return false;
    w.raw(this.bytes, output, output + n);
    return true;
  }
}

let walker: StepWalk | undefined;

/**
 * Writes the steps row of `bytes` (a whole single-object event) into w and returns true, when they are a step
 * written with `header` (the current step schema's marker and fingerprint) that eventDecoder accepts and
 * that the decoding path would write as these bytes. Otherwise returns false with w as it was.
 */
export function transcodeStep(w: ByteWriter, bytes: Buffer, source: KafkaSource, header: Buffer, maxEventBytes: number): boolean {
  if (bytes.length > maxEventBytes || bytes.length < header.length) return false;
  for (let i = 0; i < header.length; i++) if (bytes[i] !== header[i]) return false;
  if (!(walker ??= new StepWalk()).walk(bytes, header.length, w)) return false;
  w.string(source.topic);
  w.int(source.partition, 4, true);
  w.int64(Number(source.offset));
  return true;
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
