// postinstall: patches kafkajs 2.2.4 in node_modules, each patch idempotent (marked) and refused on other
// kafkajs versions so an upgrade gets looked at.
//
// 1. Correctness: replaces kafkajs 2.2.4's filter of aborted transactional records (read_committed) with one
// that is correct when transactions interleave. The shipped filter activates at most ONE aborted transaction
// per message, in the order the broker lists them, so when a fetch starts after the first offsets of two
// aborted transactions (several transactional producers writing one partition — the processors' per-partition
// producers all write the single-partition processors.state topic), records of the second leak through as
// if committed. Kafka's Java client activates every aborted transaction whose first offset has been reached
// (a queue ordered by first offset); this does the same (test/streams/aborted-filter.unit.spec.ts checks it).
// 2. Speed (profile of the processors: ≈ 12 % of their CPU in zero-filled buffer allocations, ≈ 5 % in the
// CRC): the protocol Encoder allocates its buffers with allocUnsafe instead of alloc — it only ever exposes
// bytes it wrote (buf.slice(0, offset)), so the zero fill was wasted — and the record batch CRC-32C is
// computed slicing-by-8 instead of a byte at a time, and with the CPU's CRC-32C instruction (@node-rs/crc32)
// from 256 bytes on (test/streams/kafkajs-patches.unit.spec.ts checks both).
// 3. Speed (profile of the processors, 2026-11-30: ≈ 22 % of their CPU in building produce requests): every
// varint the Encoder wrote went through a fresh Buffer.from(array), every varlong (a record's timestamp delta)
// through Long objects, records and record batches started at 512 bytes and grew by copying, and grouping a
// send's messages by partition copied the partition's array at every message (quadratic in the batch).
// Varints are now written in place (varlongs too when they fit 32 bits, else as before), records, batches,
// arrays of encoded parts and the framed request are allocated at their final size (the framing no longer
// copies the whole request twice), and the grouping pushes. The bytes are the same
// (test/streams/kafkajs-patches.unit.spec.ts compares them with kafkajs' own encoding).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const MARK = 'trajflow: patched by scripts/patch-kafkajs.mjs';
const require = createRequire(import.meta.url);
let root;
try {
  root = dirname(require.resolve('kafkajs/package.json'));
} catch {
  console.log('patch-kafkajs: kafkajs is not installed; nothing to patch');
  process.exit(0);
}
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;

/**
 * Applies one patch: `make(current)` returns the new text; skipped when already applied. A patch is known by
 * its name (several may touch one file); the first patches of a file were marked by MARK alone.
 */
function patch(relative, make, name) {
  const file = join(root, relative);
  const current = readFileSync(file, 'utf8');
  if (name === undefined ? current.includes(MARK) : current.includes(`${MARK} [${name}]`)) return;
  if (version !== '2.2.4') {
    console.error(`patch-kafkajs: kafkajs ${version} is not the 2.2.4 these patches were written for; check ${file} against scripts/patch-kafkajs.mjs`);
    process.exit(1);
  }
  writeFileSync(file, make(current));
  console.log(`patch-kafkajs: patched ${file}`);
}

/** Replaces `from` (which must occur exactly once) with `to`. */
function replaceOnce(text, from, to, file) {
  if (text.split(from).length !== 2) {
    console.error(`patch-kafkajs: expected exactly one '${from}' in ${file}`);
    process.exit(1);
  }
  return text.replace(from, to);
}

patch(
  join('src', 'consumer', 'filterAbortedMessages.js'),
  () => `// ${MARK} (kafkajs ${version}): every aborted transaction whose first offset was reached is active.
const Long = require('../utils/long')
const ABORTED_MESSAGE_KEY = Buffer.from([0, 0, 0, 0])

const isAbortMarker = ({ key, isControlRecord }) => Boolean(isControlRecord) && !!key && Buffer.from(key).equals(ABORTED_MESSAGE_KEY)

module.exports = ({ messages, abortedTransactions }) => {
  if (!abortedTransactions || !abortedTransactions.length) {
    return messages
  }
  const pending = [...abortedTransactions].sort((a, b) => Long.fromValue(a.firstOffset).compare(Long.fromValue(b.firstOffset)))
  const active = new Set()
  return messages.filter(message => {
    const offset = Long.fromValue(message.offset)
    while (pending.length && offset.gte(Long.fromValue(pending[0].firstOffset))) {
      active.add(String(pending.shift().producerId))
    }
    const { producerId, inTransaction } = message.batchContext
    if (isAbortMarker(message)) {
      active.delete(String(producerId))
      return true
    }
    return !(inTransaction && active.has(String(producerId)))
  })
}
`,
);

patch(join('src', 'protocol', 'encoder.js'), (text) => {
  const file = 'encoder.js';
  let out = replaceOnce(text, 'this.buf = Buffer.alloc(Encoder.nextPowerOfTwo(initialSize))', 'this.buf = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(initialSize))', file);
  out = replaceOnce(out, 'const newBuffer = Buffer.alloc(newLength)', 'const newBuffer = Buffer.allocUnsafe(newLength)', file);
  return `// ${MARK} (kafkajs ${version}): allocUnsafe, only written bytes are ever read.\n${out}`;
});

// The record batch CRC-32C was ≈ half of the producers' worker thread's CPU (perf, 2026-12-01), at ≈ 1 GB/s in
// JavaScript on one idle core. @node-rs/crc32 (a dependency; a prebuilt N-API binary per platform, installed
// from the npm registry like any package) uses the SSE 4.2 / ARMv8 CRC-32C instruction: ≈ 6 GB/s on a 1 MB
// buffer, 4.4 GB/s at 4 KB; below ≈ 200 bytes the N-API call costs more than it saves, hence the threshold.
const NATIVE_CRC_MIN_BYTES = 256;

patch(
  join('src', 'protocol', 'recordBatch', 'crc32C', 'crc32C.js'),
  () => `// ${MARK} [native-crc] (kafkajs ${version}): CRC-32C (Castagnoli), slicing-by-8,
// and from ${NATIVE_CRC_MIN_BYTES} bytes on the CPU's CRC-32C instruction through @node-rs/crc32 where it has a binary.
const POLY = 0x82f63b78
const T = new Int32Array(8 * 256)
for (let n = 0; n < 256; n++) {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
  T[n] = c
}
for (let n = 0; n < 256; n++) {
  let c = T[n]
  for (let k = 1; k < 8; k++) {
    c = T[c & 0xff] ^ (c >>> 8)
    T[k * 256 + n] = c
  }
}

const sliced = buffer => {
  let crc = -1
  let i = 0
  const length = buffer.length
  for (; i + 8 <= length; i += 8) {
    const a = (buffer[i] | (buffer[i + 1] << 8) | (buffer[i + 2] << 16) | (buffer[i + 3] << 24)) ^ crc
    crc =
      T[1792 + (a & 0xff)] ^ T[1536 + ((a >>> 8) & 0xff)] ^ T[1280 + ((a >>> 16) & 0xff)] ^ T[1024 + (a >>> 24)] ^
      T[768 + buffer[i + 4]] ^ T[512 + buffer[i + 5]] ^ T[256 + buffer[i + 6]] ^ T[buffer[i + 7]]
  }
  for (; i < length; i++) crc = T[(crc ^ buffer[i]) & 0xff] ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}

let native = null
try {
  native = require('@node-rs/crc32').crc32c
} catch {
  native = null // no prebuilt binary for this platform: slicing-by-8 for every length
}

const crc32C = native === null ? sliced : buffer => (buffer.length >= ${NATIVE_CRC_MIN_BYTES} ? native(buffer) : sliced(buffer))
crc32C.native = native !== null

module.exports = crc32C
`,
  'native-crc',
);

patch(
  join('src', 'protocol', 'encoder.js'),
  (text) => {
    const file = 'encoder.js';
    let out = replaceOnce(
      text,
      `  writeUVarInt(value) {
    const byteArray = []
    while ((value & UNSIGNED_INT32_MAX_NUMBER) !== 0) {
      byteArray.push((value & OTHER_BITS) | MOST_SIGNIFICANT_BIT)
      value >>>= 7
    }
    byteArray.push(value & OTHER_BITS)
    this.writeBufferInternal(Buffer.from(byteArray))
    return this
  }`,
      `  writeUVarInt(value) {
    // ${MARK} [varint]: written in place (at most 5 bytes), not through Buffer.from(array)
    this.ensureAvailable(5)
    const buf = this.buf
    let offset = this.offset
    while ((value & UNSIGNED_INT32_MAX_NUMBER) !== 0) {
      buf[offset++] = (value & OTHER_BITS) | MOST_SIGNIFICANT_BIT
      value >>>= 7
    }
    buf[offset++] = value & OTHER_BITS
    this.offset = offset
    return this
  }`,
      file,
    );
    out = replaceOnce(
      out,
      `  writeVarLong(value) {
    const byteArray = []`,
      `  writeVarLong(value) {
    // a number within 32 bits zigzags the same in 32 and 64 bits: no Long objects
    if (typeof value === 'number' && (value | 0) === value) return this.writeUVarInt(Encoder.encodeZigZag(value))
    const byteArray = []`,
      file,
    );
    out = replaceOnce(
      out,
      `  static sizeOfVarLong(value) {
    let longValue`,
      `  static sizeOfVarLong(value) {
    if (typeof value === 'number' && (value | 0) === value) return Encoder.sizeOfVarInt(value)
    let longValue`,
      file,
    );
    // room for every part of an array at once, instead of growing (and copying) part by part
    out = replaceOnce(
      out,
      `    value.forEach(v => {
      this.writeBufferInternal(v.buffer)
    })`,
      `    let total = 0
    for (const v of value) total += v.offset
    this.ensureAvailable(total)
    value.forEach(v => {
      this.writeBufferInternal(v.buffer)
    })`,
      file,
    );
    return out;
  },
  'varint',
);

patch(
  join('src', 'protocol', 'recordBatch', 'record', 'v0', 'index.js'),
  (text) =>
    replaceOnce(
      text,
      `  return new Encoder()
    .writeVarInt(sizeOfBody)`,
      `  // ${MARK} [record-size]: allocated at its final size (length varint ≤ 5 bytes + body), no growth copies
  return new Encoder(sizeOfBody + 5)
    .writeVarInt(sizeOfBody)`,
      'record/v0/index.js',
    ),
  'record-size',
);

patch(
  join('src', 'protocol', 'recordBatch', 'v0', 'index.js'),
  (text) => {
    const file = 'recordBatch/v0/index.js';
    let out = replaceOnce(
      text,
      `  const batchBody = new Encoder()`,
      `  // ${MARK} [batch-size]: the body is allocated at its final size when the records are not compressed
  const batchBody = new Encoder(
    compression === Compression.None && records.every(r => r != null && typeof r.offset === 'number')
      ? 40 + records.reduce((size, r) => size + r.offset, 0)
      : undefined
  )`,
      file,
    );
    out = replaceOnce(out, `  const batch = new Encoder()`, `  const batch = new Encoder(batchBody.offset + 9)`, file);
    out = replaceOnce(
      out,
      `  return new Encoder().writeInt64(firstOffset).writeBytes(batch.buffer)`,
      `  return new Encoder(batch.offset + 12).writeInt64(firstOffset).writeBytes(batch.buffer)`,
      file,
    );
    return out;
  },
  'batch-size',
);

patch(
  join('src', 'producer', 'groupMessagesPerPartition.js'),
  () => `// ${MARK} [group-linear] (kafkajs ${version}): messages grouped by partition in one pass, in order (the
// shipped reduce copied the partition's array at every message).
module.exports = ({ topic, partitionMetadata, messages, partitioner }) => {
  if (partitionMetadata.length === 0) {
    return {}
  }

  const result = {}
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message })
    const current = result[partition]
    if (current) current.push(message)
    else result[partition] = [message]
  }
  return result
}
`,
  'group-linear',
);

patch(
  join('src', 'protocol', 'request.js'),
  (text) =>
    replaceOnce(
      text,
      `  const requestPayload = new Encoder()
    .writeInt16(apiKey)
    .writeInt16(apiVersion)
    .writeInt32(correlationId)
    .writeString(clientId)
    .writeEncoder(payload)

  return new Encoder().writeInt32(requestPayload.size()).writeEncoder(requestPayload)`,
      `  // ${MARK} [framing]: size, header and payload written once into a buffer of their final size (the
  // shipped code copied the whole request twice, growing two encoders from 512 bytes)
  const size = 2 + 2 + 4 + 2 + (clientId == null ? 0 : Buffer.byteLength(clientId, 'utf8')) + payload.size()
  return new Encoder(size + 4)
    .writeInt32(size)
    .writeInt16(apiKey)
    .writeInt16(apiVersion)
    .writeInt32(correlationId)
    .writeString(clientId)
    .writeEncoder(payload)`,
      'request.js',
    ),
  'framing',
);

patch(
  join('src', 'protocol', 'requests', 'produce', 'v3', 'request.js'),
  (text) =>
    replaceOnce(
      text,
      `  return new Encoder()
    .writeInt32(partition)
    .writeInt32(recordBatch.size())`,
      `  // ${MARK} [partition-size]
  return new Encoder(recordBatch.size() + 8)
    .writeInt32(partition)
    .writeInt32(recordBatch.size())`,
      'produce/v3/request.js',
    ),
  'partition-size',
);

// 4. Speed (fetch side, 2026-11-30): every fetched record's offset and timestamp were computed through Long
// objects (parse the batch's first offset from its decimal string, add, format back), its timestamp delta read
// as a Long byte by byte, and the consumer's batch parsed every offset into a Long again to compare it with
// the fetched offset — ≈ 0.8 of ≈ 1.9 µs per record in kafkajs' fetch decoding. Below 2^53 those are now
// plain numbers (the same decimal strings; anything larger takes the Long path as before).
patch(
  join('src', 'protocol', 'recordBatch', 'record', 'v0', 'decoder.js'),
  (text) => {
    const file = 'record/v0/decoder.js';
    let out = replaceOnce(
      text,
      `  const timestampDelta = decoder.readVarLong()
  const timestamp =
    timestampType === TimestampTypes.LOG_APPEND_TIME && maxTimestamp
      ? maxTimestamp
      : Long.fromValue(firstTimestamp)
          .add(timestampDelta)
          .toString()

  const offsetDelta = decoder.readVarInt()
  const offset = Long.fromValue(firstOffset)
    .add(offsetDelta)
    .toString()`,
      `  // ${MARK} [fetch-decode]
  const timestampDelta = readSmallVarLong(decoder)
  const timestamp =
    timestampType === TimestampTypes.LOG_APPEND_TIME && maxTimestamp
      ? maxTimestamp
      : addToDecimal(firstTimestamp, timestampDelta)

  const offsetDelta = decoder.readVarInt()
  const offset = addToDecimal(firstOffset, offsetDelta)`,
      file,
    );
    out += `
// ${MARK} [fetch-decode]: a decimal string below 2^53 plus a number is added as numbers (every record of a
// batch adds to the same first offset and timestamp, so the last base's parse is kept); anything else goes
// through Long as before.
let lastBase = null
let lastBaseNumber = 0
function addToDecimal(decimal, delta) {
  if (typeof delta === 'number' && typeof decimal === 'string' && decimal.length <= 15) {
    if (decimal !== lastBase) {
      lastBase = decimal
      lastBaseNumber = Number(decimal)
    }
    const sum = lastBaseNumber + delta
    if (Number.isSafeInteger(sum)) return String(sum)
  }
  return Long.fromValue(decimal).add(delta).toString()
}

// A zigzag varlong of at most 7 bytes (49 bits, a safe number) read as a number; a longer one as a Long.
function readSmallVarLong(decoder) {
  const buffer = decoder.buffer
  let offset = decoder.offset
  let value = 0
  let scale = 1
  for (let i = 0; i < 7; i++) {
    const byte = buffer[offset++]
    value += (byte & 0x7f) * scale
    if (byte < 0x80) {
      decoder.offset = offset
      return value % 2 === 0 ? value / 2 : -(value + 1) / 2
    }
    scale *= 128
  }
  return decoder.readVarLong()
}
`;
    return out;
  },
  'fetch-decode',
);

patch(
  join('src', 'consumer', 'batch.js'),
  (text) => {
    let out = replaceOnce(
      text,
      `    this.messagesWithinOffset = this.rawMessages.filter(message =>
      Long.fromValue(message.offset).gte(longFetchedOffset)
    )`,
      `    // ${MARK} [fetch-offsets]
    this.messagesWithinOffset = withinOffset(this.rawMessages, this.fetchedOffset, longFetchedOffset)`,
      'consumer/batch.js',
    );
    out += `
// ${MARK} [fetch-offsets]: offsets below 2^53 (decimal strings of at most 15 digits) compare as numbers;
// kafkajs parsed every message's offset into a Long.
function withinOffset(messages, fetchedOffset, longFetchedOffset) {
  const from = String(fetchedOffset)
  if (from.length <= 15 && messages.every(message => typeof message.offset === 'string' && message.offset.length <= 15)) {
    const first = Number(from)
    return messages.filter(message => Number(message.offset) >= first)
  }
  return messages.filter(message => Long.fromValue(message.offset).gte(longFetchedOffset))
}
`;
    return out;
  },
  'fetch-offsets',
);

// 5. Latency (processors' transactions, 2026-12-01): a transaction ran AddPartitionsToTxn → Produce →
// AddOffsetsToTxn → TxnOffsetCommit → EndTxn, each waiting for the one before (p50 ≈ 17 + 10 + 4 ms at 5,000
// steps/s on the 2-core VM). Only AddOffsetsToTxn has to follow AddPartitionsToTxn: the transaction
// coordinator answers CONCURRENT_TRANSACTIONS to a second state change while one is being written, but the
// Produce's check that its partitions are in the transaction does not look at pending changes (Kafka 3.x,
// TransactionCoordinator.handleVerifyPartitionsInTransaction). So a transactional sendBatch may be given
// `onPartitionsAdded`: it adds every partition of the send to the transaction in one AddPartitionsToTxn (not
// one per leader broker, which would be concurrent state changes), calls the hook once, and then produces —
// the caller sends its offsets from the hook, beside the Produce. Without the hook nothing changes.
patch(
  join('src', 'producer', 'messageProducer.js'),
  (text) =>
    replaceOnce(
      replaceOnce(
        text,
        `  const sendBatch = async ({ acks = -1, timeout, compression, topicMessages = [] }) => {`,
        `  // ${MARK} [partitions-added]: onPartitionsAdded, see sendMessages.js
  const sendBatch = async ({ acks = -1, timeout, compression, topicMessages = [], onPartitionsAdded }) => {`,
        'messageProducer.js',
      ),
      `      compression,
      topicMessages: mergedTopicMessages,
    })`,
      `      compression,
      topicMessages: mergedTopicMessages,
      onPartitionsAdded,
    })`,
      'messageProducer.js',
    ),
  'partitions-added',
);

patch(
  join('src', 'producer', 'sendMessages.js'),
  (text) =>
    replaceOnce(
      replaceOnce(
        text,
        `  return async ({ acks, timeout, compression, topicMessages }) => {`,
        `  // ${MARK} [partitions-added]: a transactional send given onPartitionsAdded adds all its partitions in one
  // AddPartitionsToTxn, then calls the hook once (the caller's offsets go beside the Produce), then produces.
  return async ({ acks, timeout, compression, topicMessages, onPartitionsAdded }) => {`,
        'sendMessages.js',
      ),
      `      const brokers = Array.from(responsePerBroker.keys())`,
      `      if (onPartitionsAdded && eosManager.isTransactional()) {
        await eosManager.addPartitionsToTransaction(
          Array.from(topicMetadata.entries()).map(([topic, { messagesPerPartition }]) => ({
            topic,
            partitions: keys(messagesPerPartition).map(partition => ({ partition: Number(partition) })),
          }))
        )
        const hook = onPartitionsAdded
        onPartitionsAdded = undefined
        hook()
      }

      const brokers = Array.from(responsePerBroker.keys())`,
      'sendMessages.js',
    ),
  'partitions-added',
);

// 6. Speed (the producers' worker thread, 2026-12-01: ≈ 10 % of it copying buffers, ≈ 14 % in GC, most of
// that for the produce request's intermediate buffers): kafkajs built a produce request inside out — each
// record in a buffer of its own, then copied into the batch body, the body into the batch (for its CRC), the
// batch behind its first offset, that into its partition, the partitions into their topic and the topics into
// the request (the last two grown by doubling from 512 bytes): each value byte copied ≈ 8 times, through a
// dozen allocations per partition. Uncompressed requests whose messages carry no headers (the processors'
// all do) are now written in one pass into one buffer of their final size, each batch's CRC-32C computed in
// place; anything else takes kafkajs' path. Same bytes (test/streams/kafkajs-patches.unit.spec.ts compares
// the two paths).
patch(
  join('src', 'protocol', 'requests', 'produce', 'v3', 'request.js'),
  (text) =>
    replaceOnce(
      text,
      `  encode: async () => {
    const encodeTopic = topicEncoder(compression)`,
      `  encode: async () => {
    // ${MARK} [produce-one-pass]: see encodeInOnePass
    if (compression === Types.None && !module.exports.kafkajsPath && withoutHeaders(topicData)) {
      return encodeInOnePass({ acks, timeout, transactionalId, producerId, producerEpoch, topicData })
    }
    const encodeTopic = topicEncoder(compression)`,
      'produce/v3/request.js',
    ) +
    `
// ${MARK} [produce-one-pass]: the request written in one pass into one buffer of its final size: the sizes
// first (each partition's timestamps as partitionsEncoder takes them), then every field in order, each batch's
// CRC-32C over its bytes in place. kafkajsPath (tests only) forces kafkajs' own path, to compare the bytes.
const crc32C = require('../../../recordBatch/crc32C')
const { MAGIC_BYTE } = require('../../../recordBatch/v0')

const withoutHeaders = topicData =>
  topicData.every(({ partitions }) =>
    partitions.every(({ messages }) => messages.every(m => m.headers == null || Object.keys(m.headers).length === 0))
  )

const BATCH_OVERHEAD = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4

const encodeInOnePass = ({ acks, timeout, transactionalId, producerId, producerEpoch, topicData }) => {
  const attributes = Types.None | (transactionalId ? 16 : 0)
  let size = 2 + (transactionalId == null ? 0 : Buffer.byteLength(transactionalId)) + 2 + 4 + 4
  const plans = topicData.map(({ topic, partitions }) => {
    size += 2 + Buffer.byteLength(topic) + 4
    return partitions.map(({ partition, messages, firstSequence }) => {
      const dateNow = Date.now()
      const timestamps = messages.map(m => m.timestamp).filter(timestamp => timestamp != null).sort()
      const firstTimestamp = timestamps.length === 0 ? dateNow : timestamps[0]
      const maxTimestamp = timestamps.length === 0 ? dateNow : timestamps[timestamps.length - 1]
      const bodySizes = new Array(messages.length)
      const deltas = new Array(messages.length)
      let recordsSize = 0
      for (let i = 0; i < messages.length; i++) {
        const message = messages[i]
        const timestampDelta = (message.timestamp || dateNow) - firstTimestamp
        const bodySize =
          1 +
          Encoder.sizeOfVarLong(timestampDelta) +
          Encoder.sizeOfVarInt(i) +
          Encoder.sizeOfVarIntBytes(message.key) +
          Encoder.sizeOfVarIntBytes(message.value) +
          1
        deltas[i] = timestampDelta
        bodySizes[i] = bodySize
        recordsSize += Encoder.sizeOfVarInt(bodySize) + bodySize
      }
      size += 4 + 4 + BATCH_OVERHEAD + recordsSize
      return { partition, messages, firstSequence, firstTimestamp, maxTimestamp, bodySizes, deltas }
    })
  })

  const encoder = new Encoder(size)
  encoder.writeString(transactionalId).writeInt16(acks).writeInt32(timeout).writeInt32(topicData.length)
  topicData.forEach(({ topic }, t) => {
    encoder.writeString(topic).writeInt32(plans[t].length)
    for (const { partition, messages, firstSequence = 0, firstTimestamp, maxTimestamp, bodySizes, deltas } of plans[t]) {
      encoder.writeInt32(partition)
      const sizeAt = encoder.offset
      encoder.writeInt32(0).writeInt64(0)
      const lengthAt = encoder.offset
      encoder.writeInt32(0).writeInt32(0).writeInt8(MAGIC_BYTE)
      const crcAt = encoder.offset
      encoder
        .writeUInt32(0)
        .writeInt16(attributes)
        .writeInt32(messages.length - 1)
        .writeInt64(firstTimestamp)
        .writeInt64(maxTimestamp)
        .writeInt64(producerId)
        .writeInt16(producerEpoch)
        .writeInt32(firstSequence)
        .writeInt32(messages.length)
      for (let i = 0; i < messages.length; i++) {
        encoder
          .writeVarInt(bodySizes[i])
          .writeInt8(0)
          .writeVarLong(deltas[i])
          .writeVarInt(i)
          .writeVarIntBytes(messages[i].key)
          .writeVarIntBytes(messages[i].value)
          .writeVarInt(0)
      }
      const end = encoder.offset
      encoder.buf.writeInt32BE(end - sizeAt - 4, sizeAt)
      encoder.buf.writeInt32BE(end - lengthAt - 4, lengthAt)
      encoder.buf.writeUInt32BE(crc32C(encoder.buf.subarray(crcAt + 4, end)), crcAt)
    }
  })
  return encoder
}
`,
  'produce-one-pass',
);
