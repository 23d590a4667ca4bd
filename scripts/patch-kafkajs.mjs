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
// computed slicing-by-8 instead of a byte at a time (test/streams/kafkajs-patches.unit.spec.ts checks both).
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

/** Applies one patch: `make(current)` returns the new text; skipped when already marked. */
function patch(relative, make) {
  const file = join(root, relative);
  const current = readFileSync(file, 'utf8');
  if (current.includes(MARK)) return;
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

patch(join('src', 'consumer', 'filterAbortedMessages.js'), () => `// ${MARK} (kafkajs ${version}): every aborted transaction whose first offset was reached is active.
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
`);

patch(join('src', 'protocol', 'encoder.js'), (text) => {
  const file = 'encoder.js';
  let out = replaceOnce(text, 'this.buf = Buffer.alloc(Encoder.nextPowerOfTwo(initialSize))', 'this.buf = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(initialSize))', file);
  out = replaceOnce(out, 'const newBuffer = Buffer.alloc(newLength)', 'const newBuffer = Buffer.allocUnsafe(newLength)', file);
  return `// ${MARK} (kafkajs ${version}): allocUnsafe, only written bytes are ever read.\n${out}`;
});

patch(join('src', 'protocol', 'recordBatch', 'crc32C', 'crc32C.js'), () => `// ${MARK} (kafkajs ${version}): CRC-32C (Castagnoli), slicing-by-8.
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

const crc32C = buffer => {
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

module.exports = crc32C
`);
