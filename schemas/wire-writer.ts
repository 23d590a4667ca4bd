// Writing events that carry byte ranges of other events (wire-step.ts): the fields of their own go through
// the schema's avsc types on an avsc Tap, so they are the codec's bytes; the carried ranges are copied.
// Like avsc, a write past the end of the scratch buffer is dropped and only counted, and the event is
// written again into a buffer of the size it needs.
import { recordFieldsOf, type FieldType } from './record-fields.js';
import { tapAt, type WritableTap } from './tap.js';
import type { EventCodec } from './codec.js';
import type { EventName, TrajectoryEvent } from './generated/types.js';
import { OversizeEventError } from './errors.js';
import { HEADER_BYTES } from './registry.js';
import { WireStep } from './wire-step.js';

/** Copies src[start, end) at tap.pos. */
export function copyBytes(tap: WritableTap, src: Buffer, start: number, end: number): void {
  const n = end - start;
  const buf = tap.buf;
  const pos = tap.pos;
  if (pos + n <= buf.length) {
    // A native copy costs a call; a few bytes go faster in a loop.
    if (n < 48) for (let i = 0; i < n; i++) buf[pos + i] = src[start + i]!;
    else src.copy(buf, pos, start, end);
  }
  tap.pos = pos + n;
}

/** Writes `count` copies of one byte. */
export function fillBytes(tap: WritableTap, byte: number, count: number): void {
  const pos = tap.pos;
  if (pos + count <= tap.buf.length && count > 0) tap.buf.fill(byte, pos, pos + count);
  tap.pos = pos + count;
}

/** Writes `count` copies of one float (4 bytes each, little-endian). */
export function repeatFloat(tap: WritableTap, value: number, count: number): void {
  const buf = tap.buf;
  const pos = tap.pos;
  const end = pos + 4 * count;
  if (end <= buf.length && count > 0) {
    buf.writeFloatLE(value, pos);
    // Doubling copies: 4, 8, 16 … bytes.
    for (let filled = 4; filled < end - pos; filled *= 2) buf.copyWithin(pos + filled, pos, pos + Math.min(filled, end - pos - filled));
  }
  tap.pos = end;
}

const INITIAL_SCRATCH_BYTES = 64 * 1024;

/** One event kind's header and field types, and a scratch buffer to write into. */
export class WireEventWriter {
  private scratch = Buffer.allocUnsafe(INITIAL_SCRATCH_BYTES);
  // One tap for every write (writes are synchronous; the field types keep no reference to it).
  private readonly tap = tapAt(this.scratch, HEADER_BYTES);

  constructor(
    readonly header: Buffer,
    readonly fields: readonly FieldType[],
    private readonly maxEventBytes: number,
  ) {}

  /** A writer for the codec's current schema of `event`, or null unless it is `version` with these fields in this order. */
  static of(codec: EventCodec, event: EventName, version: number, fieldNames: readonly string[]): WireEventWriter | null {
    const entry = codec.registry.current(event);
    const fields = recordFieldsOf(entry, version, fieldNames);
    return fields === null ? null : new WireEventWriter(entry.header, fields, codec.maxEventBytes);
  }

  /** The event `body` writes (its datum), with the header, in a buffer of its own. */
  write(event: EventName, body: (tap: WritableTap) => void): Buffer {
    const tap = this.tap;
    tap.buf = this.scratch;
    tap.pos = HEADER_BYTES;
    body(tap);
    // tap.pos counts the header too, as the codec's limit does.
    if (tap.pos > this.maxEventBytes) throw new OversizeEventError(event, tap.pos, this.maxEventBytes);
    if (!tap.isValid()) {
      this.scratch = Buffer.allocUnsafe(Math.min(this.maxEventBytes, Math.max(tap.pos, 2 * this.scratch.length)));
      tap.buf = this.scratch;
      tap.pos = HEADER_BYTES;
      body(tap);
    }
    const out = Buffer.allocUnsafe(tap.pos);
    this.header.copy(out, 0);
    this.scratch.copy(out, HEADER_BYTES, HEADER_BYTES, tap.pos);
    return out;
  }
}

const TRAJECTORY_FIELDS = [
  'runId',
  'envName',
  'envVersion',
  'groupId',
  'episodeId',
  'outcome',
  'stepCount',
  'totalReward',
  'success',
  'invalidActions',
  'gapCount',
  'minPolicyVersion',
  'maxPolicyVersion',
  'firstEventTimeMs',
  'lastEventTimeMs',
  'steps',
  'metrics',
] as const;
const STEPS = TRAJECTORY_FIELDS.indexOf('steps');

/**
 * Trajectories whose steps are WireSteps, their steps copied from the step events' bytes (a trajectory step
 * is three ranges of its step event: wire-step.ts). The other fields are written by the schema's types.
 */
export class WireTrajectoryWriter {
  private constructor(private readonly writer: WireEventWriter) {}

  /** null when the current trajectory schema is not the v1 layout this writer knows. */
  static of(codec: EventCodec): WireTrajectoryWriter | null {
    const writer = WireEventWriter.of(codec, 'trajectory', 1, TRAJECTORY_FIELDS);
    return writer === null ? null : new WireTrajectoryWriter(writer);
  }

  /** The trajectory's event bytes, or null when one of its steps is not a WireStep (encode it with the codec). */
  encode(trajectory: TrajectoryEvent): Buffer | null {
    const steps = trajectory.steps;
    for (const step of steps) if (!(step instanceof WireStep)) return null;
    const fields = this.writer.fields;
    return this.writer.write('trajectory', (tap) => {
      for (let i = 0; i < STEPS; i++) fields[i]!._write(tap, (trajectory as unknown as Record<string, unknown>)[TRAJECTORY_FIELDS[i]!]);
      if (steps.length > 0) {
        tap.writeLong(steps.length);
        for (const step of steps as unknown as WireStep[]) {
          const { layout, bytes } = step;
          copyBytes(tap, bytes, layout.stepStart, layout.stepEnd);
          copyBytes(tap, bytes, layout.validStart, layout.validEnd);
          copyBytes(tap, bytes, layout.timeStart, layout.timeEnd);
        }
      }
      tap.writeLong(0);
      fields[STEPS + 1]!._write(tap, trajectory.metrics);
    });
  }
}
