// The step transcoder on a worker thread (transcode-pool.ts posts to it). The sink's main thread reads Kafka,
// batches, inserts and acks; walking each step's Avro bytes into its RowBinary row (step-transcoder.ts) was
// the largest share of that thread's time, so it runs here, beside it, on the machine's other core.
//
// In: a batch of step payloads packed into one buffer (transferred, not copied) with each one's end,
// partition and offset, all from one topic. Out: their rows, packed, with each one's end in the rows, or −1
// for a payload the transcoder declines (the main thread then decodes it: a check failed, or the bytes are
// of a shape only the decoding path handles).
import { parentPort, workerData } from 'node:worker_threads';
import { ByteWriter } from './row-binary.js';
import { transcodeStep } from './step-transcoder.js';

export interface TranscodeRequest {
  readonly id: number;
  readonly topic: string;
  readonly payloads: Uint8Array;
  /** payloads[ends[i − 1] .. ends[i]) is payload i. */
  readonly ends: Int32Array;
  readonly partitions: Int32Array;
  readonly offsets: Float64Array;
}

export interface TranscodeReply {
  readonly id: number;
  readonly rows: Uint8Array;
  /** rows[rowEnds[j − 1] .. rowEnds[i]) is payload i's row (j the previous accepted one); −1: declined. */
  readonly rowEnds: Int32Array;
}

export interface TranscodeWorkerData {
  /** The current step schema's single-object header. */
  readonly header: Uint8Array;
  readonly maxEventBytes: number;
}

const { header, maxEventBytes } = workerData as TranscodeWorkerData;
const headerBytes = Buffer.from(header);

parentPort!.on('message', (request: TranscodeRequest) => {
  const count = request.ends.length;
  const payloads = Buffer.from(request.payloads.buffer, request.payloads.byteOffset, request.payloads.byteLength);
  // A row is at most 4 bytes per Avro byte plus the Kafka columns; sized so that it rarely grows.
  const w = new ByteWriter(Math.max(1024, 2 * payloads.length + count * (request.topic.length + 32)));
  const rowEnds = new Int32Array(count);
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = request.ends[i]!;
    const source = { topic: request.topic, partition: request.partitions[i]!, offset: String(request.offsets[i]) };
    rowEnds[i] = transcodeStep(w, payloads.subarray(start, end), source, headerBytes, maxEventBytes) ? w.pos : -1;
    start = end;
  }
  // Posted at its exact size and transferred: the main thread receives it without a copy.
  const rows = new Uint8Array(w.pos);
  rows.set(w.result());
  const reply: TranscodeReply = { id: request.id, rows, rowEnds };
  parentPort!.postMessage(reply, [rows.buffer, rowEnds.buffer]);
});
