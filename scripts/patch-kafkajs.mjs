// postinstall: replaces kafkajs 2.2.4's filter of aborted transactional records (read_committed) with one
// that is correct when transactions interleave. The shipped filter activates at most ONE aborted transaction
// per message, in the order the broker lists them, so when a fetch starts after the first offsets of two
// aborted transactions (several transactional producers writing one partition — the processors' per-partition
// producers all write the single-partition processors.state topic), records of the second leak through as
// if committed. Kafka's Java client activates every aborted transaction whose first offset has been reached
// (a queue ordered by first offset); this does the same. Idempotent; refuses other kafkajs versions loudly
// so an upgrade gets looked at (test/streams/aborted-filter.unit.spec.ts checks the behaviour).
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
const file = join(root, 'src', 'consumer', 'filterAbortedMessages.js');
const current = readFileSync(file, 'utf8');
if (current.includes(MARK)) process.exit(0);
if (version !== '2.2.4') {
  console.error(`patch-kafkajs: kafkajs ${version} is not the 2.2.4 this patch was written for; check ${file} against scripts/patch-kafkajs.mjs`);
  process.exit(1);
}
writeFileSync(
  file,
  `// ${MARK} (kafkajs ${version}): every aborted transaction whose first offset was reached is active.
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
console.log(`patch-kafkajs: patched ${file}`);
