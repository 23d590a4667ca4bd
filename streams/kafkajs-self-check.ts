// Refuses to run on a kafkajs without trajflow's read_committed fix. kafkajs 2.2.4 is a declared fork
// (patches/kafkajs+2.2.4.patch, applied by patch-package in `npm install`'s postinstall); an install with
// --ignore-scripts, or a failed patch (patch-package only warns outside CI), leaves the shipped filter of
// aborted transactions, which lets records of a second interleaved aborted transaction through as committed
// — silently (docs/design/kafka-client.md). The check is behavioural: it runs the installed filter on two
// interleaved aborted transactions and sees that both are dropped, so it holds whatever the file looks like.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { TrajflowError } from '../core/errors.js';

interface FetchedRecord {
  readonly offset: string;
  readonly key: Buffer;
  readonly isControlRecord?: boolean;
  readonly batchContext: { readonly producerId: string; readonly inTransaction: boolean };
}
/** kafkajs' src/consumer/filterAbortedMessages.js. */
export type AbortedFilter = (fetched: { messages: FetchedRecord[]; abortedTransactions: { producerId: string; firstOffset: string }[] }) => FetchedRecord[];

const FILTER_MODULE = 'kafkajs/src/consumer/filterAbortedMessages.js';

const data = (offset: number, producerId: string): FetchedRecord => ({
  offset: String(offset),
  key: Buffer.from(`k${offset}`),
  batchContext: { producerId, inTransaction: true },
});
const abortMarker = (offset: number, producerId: string): FetchedRecord => ({
  offset: String(offset),
  key: Buffer.from([0, 0, 0, 0]),
  isControlRecord: true,
  batchContext: { producerId, inTransaction: true },
});

/**
 * Whether `filter` drops every record of two aborted transactions that both began before the fetch's first
 * offset (producers 7 and 8) and keeps the committed one (producer 9). The shipped kafkajs 2.2.4 filter
 * activates one aborted transaction per record, in the broker's order (8 first), and so keeps producer 7's
 * record at offset 20.
 */
export function abortedFilterIsCorrect(filter: AbortedFilter): boolean {
  const messages = [data(20, '7'), data(21, '8'), data(22, '9'), abortMarker(23, '7'), abortMarker(24, '8')];
  const kept = filter({
    messages,
    abortedTransactions: [
      { producerId: '8', firstOffset: '11' },
      { producerId: '7', firstOffset: '10' },
    ],
  });
  const keptData = kept.filter((record) => !record.isControlRecord).map((record) => record.offset);
  return keptData.length === 1 && keptData[0] === '22';
}

const checked = new Set<string>();

/**
 * Throws unless the kafkajs at `filterModule` (by default the one trajflow imports) has the read_committed
 * fix; each module is checked once per process.
 */
export function assertKafkajsPatched(filterModule: string = createRequire(import.meta.url).resolve(FILTER_MODULE)): void {
  if (checked.has(filterModule)) return;
  const filter = createRequire(import.meta.url)(filterModule) as AbortedFilter;
  if (!abortedFilterIsCorrect(filter)) {
    throw new TrajflowError(
      'KAFKA_CLIENT_UNPATCHED',
      `kafkajs at ${dirname(dirname(dirname(filterModule)))} lacks trajflow's fix of read_committed (records of ` +
        'interleaved aborted transactions would be read as committed): patches/kafkajs+2.2.4.patch is not applied, ' +
        'e.g. after `npm ci --ignore-scripts`. Run `npm install` in the trajflow directory (its postinstall runs ' +
        'patch-package); see docs/design/kafka-client.md.',
    );
  }
  checked.add(filterModule);
}
