// The sink's side of transcode-worker.ts: step envelopes are collected for a moment (until SLICE_EVENTS of
// them, or the end of the current turn of the event loop), packed into one buffer, posted to the worker, and
// their rows handed on in order when it answers. One worker: replies come back in the order sent.
import { Worker } from 'node:worker_threads';
import type { Envelope } from '../../streams/index.js';
import { ByteWriter } from './row-binary.js';
import { TranscodedStep } from './step-transcoder.js';
import type { TranscodeReply, TranscodeRequest, TranscodeWorkerData } from './transcode-worker.js';

/** Envelopes per posted batch at most: large enough that posting costs little per event, small enough to keep both threads busy. */
const SLICE_EVENTS = 500;

export type StepEnvelope = Envelope<Buffer | null> & { readonly value: Buffer };

export interface TranscodePoolHandlers {
  /** A step's row, in the order the envelopes were submitted (declined ones aside). */
  readonly row: (row: TranscodedStep<StepEnvelope>) => void;
  /** A step the transcoder declined: the caller decodes it (and dead-letters it if that fails). */
  readonly declined: (envelope: StepEnvelope) => void;
  /** The worker failed (a bug: the transcoder never throws on bad input). */
  readonly error: (error: Error) => void;
}

export class TranscodePool {
  private readonly worker: Worker;
  private pending: StepEnvelope[] = [];
  private scheduled = false;
  private readonly posted = new Map<number, StepEnvelope[]>();
  private nextId = 0;
  private idleWaiters: (() => void)[] = [];
  private failed = false;
  private closing = false;

  constructor(
    data: TranscodeWorkerData,
    private readonly handlers: TranscodePoolHandlers,
  ) {
    this.worker = new Worker(new URL('./transcode-worker-entry.mjs', import.meta.url), { workerData: data });
    this.worker.on('message', (reply: TranscodeReply) => this.receive(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      if (code !== 0 && !this.closing) this.fail(new Error(`sink: the step transcoder's worker exited with code ${code}`));
    });
  }

  /**
   * Queues a step for the worker; false for one it cannot take — an offset past 2^53, which the worker's
   * Float64Array would not carry exactly (the caller transcodes that one itself).
   */
  submit(envelope: StepEnvelope): boolean {
    if (Number(envelope.offset) > Number.MAX_SAFE_INTEGER) return false;
    this.pending.push(envelope);
    if (this.pending.length >= SLICE_EVENTS) this.post();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.post();
      });
    }
    return true;
  }

  /** Resolves when every submitted step has come back. */
  idle(): Promise<void> {
    if (this.pending.length === 0 && this.posted.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): Promise<void> {
    this.closing = true;
    return this.worker.terminate().then(() => undefined);
  }

  private post(): void {
    const envelopes = this.pending;
    if (envelopes.length === 0) return;
    this.pending = [];
    let bytes = 0;
    for (const envelope of envelopes) bytes += envelope.value.length;
    const payloads = new Uint8Array(bytes);
    const ends = new Int32Array(envelopes.length);
    const partitions = new Int32Array(envelopes.length);
    const offsets = new Float64Array(envelopes.length);
    let at = 0;
    for (let i = 0; i < envelopes.length; i++) {
      const envelope = envelopes[i]!;
      payloads.set(envelope.value, at);
      at += envelope.value.length;
      ends[i] = at;
      partitions[i] = envelope.partition;
      offsets[i] = Number(envelope.offset);
    }
    const id = this.nextId++;
    this.posted.set(id, envelopes);
    const request: TranscodeRequest = { id, topic: envelopes[0]!.topic, payloads, ends, partitions, offsets };
    this.worker.postMessage(request, [payloads.buffer, ends.buffer, partitions.buffer, offsets.buffer]);
  }

  private receive(reply: TranscodeReply): void {
    const envelopes = this.posted.get(reply.id);
    if (!envelopes) {
      this.fail(new Error(`sink: the step transcoder answered an unknown batch ${reply.id}`));
      return;
    }
    this.posted.delete(reply.id);
    const chunk = ByteWriter.over(Buffer.from(reply.rows.buffer, reply.rows.byteOffset, reply.rows.byteLength));
    let start = 0;
    for (let i = 0; i < envelopes.length; i++) {
      const end = reply.rowEnds[i]!;
      const envelope = envelopes[i]!;
      if (end < 0) {
        this.handlers.declined(envelope);
        continue;
      }
      this.handlers.row(new TranscodedStep(chunk, start, end, envelope.value, envelope));
      start = end;
    }
    if (this.pending.length === 0 && this.posted.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.handlers.error(error);
  }
}
