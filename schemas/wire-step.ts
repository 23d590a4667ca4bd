// Step events read without decoding their text and token arrays: a WireStep keeps the event's bytes and
// where each field lies in them.
//
// Why: the processors pass a step's observation, action, token ids and log-probs through unchanged — into
// the trajectory (the same fields, in the same Avro encoding) and into the sample (token ids and log-probs
// again, beside masks and advantages made from counts). Decoding them into JS strings and arrays and
// encoding them back was most of the processors' codec work, and the decoded arrays, alive until their
// group's transaction commits, most of what each scavenge copied. wire-writer.ts (trajectories) and
// processors/samples/write-planned-sample.ts (samples) write them by copying those byte ranges.
//
// What it guarantees: a WireStep is only made where the ordinary path (codec.decode + validateEvent) would
// accept the same bytes and decode the same values. The scalar fields are read with the schema's own avsc
// types; the five passed-through fields are only walked, and checked as validateEvent checks them (token ids
// integers >= 0, log-probs finite and <= 0, as many log-probs as action tokens). Anything else — another
// writer schema, an array in several blocks, a failed check, a corrupt datum — gets no WireStep, and the
// caller decodes it the ordinary way, which gives the ordinary values or the ordinary error. The
// passed-through fields decode on first access, with the same avsc types.
import { recordFieldsOf, type FieldType } from './record-fields.js';
import { tapAt } from './tap.js';
import type { EventCodec } from './codec.js';
import { HEADER_BYTES } from './registry.js';
import type { StepEvent } from './generated/types.js';
import { validateStepScalars } from './validate.js';

/** The step v1 fields, in order: the layout this file walks. */
const STEP_FIELDS = [
  'eventId',
  'runId',
  'envName',
  'envVersion',
  'groupId',
  'episodeId',
  'stepIndex',
  'observation',
  'observationTokenIds',
  'action',
  'actionTokenIds',
  'actionLogProbs',
  'policyVersion',
  'reward',
  'terminated',
  'truncated',
  'actionValid',
  'stateKey',
  'metrics',
  'info',
  'eventTimeMs',
] as const;
const F = Object.fromEntries(STEP_FIELDS.map((name, i) => [name, i])) as { [K in (typeof STEP_FIELDS)[number]]: number };

/**
 * Where a step's fields lie in its bytes, as one flat object (a step lives until its group's transaction
 * commits, so every object it holds is copied by the scavenges until then). Arrays are single blocks: their
 * items are bytes [start, end). A trajectory step is the step's fields stepIndex … reward, actionValid …
 * stateKey and eventTimeMs, in that order and with the same types: three ranges.
 */
export interface StepLayout {
  /** [stepIndex … reward] */
  readonly stepStart: number;
  readonly stepEnd: number;
  /** [actionValid … stateKey] */
  readonly validStart: number;
  readonly validEnd: number;
  /** [eventTimeMs] */
  readonly timeStart: number;
  readonly timeEnd: number;
  /** -1 when the step has no observation token ids. */
  readonly observationTokenCount: number;
  readonly observationTokensStart: number;
  readonly observationTokensEnd: number;
  readonly actionTokenCount: number;
  readonly actionTokensStart: number;
  readonly actionTokensEnd: number;
  /** As many as action tokens. */
  readonly logProbsStart: number;
  readonly logProbsEnd: number;
}

/** A decoded step whose text and token fields stay in `bytes` until something reads them. */
export class WireStep implements StepEvent {
  private full: { observation: string; observationTokenIds: number[] | null; action: string; actionTokenIds: number[]; actionLogProbs: number[] } | undefined;

  constructor(
    readonly eventId: string,
    readonly runId: string,
    readonly envName: string,
    readonly envVersion: string,
    readonly groupId: string,
    readonly episodeId: string,
    readonly stepIndex: number,
    readonly policyVersion: number,
    readonly reward: number,
    readonly terminated: boolean,
    readonly truncated: boolean,
    readonly actionValid: boolean,
    readonly stateKey: string | null,
    readonly metrics: Record<string, number>,
    readonly info: Record<string, string>,
    readonly eventTimeMs: number,
    /** The whole event (header included); the layout's offsets index it. */
    readonly bytes: Buffer,
    readonly layout: StepLayout,
    private readonly fields: readonly FieldType[],
  ) {}

  get observation(): string {
    return this.passedThrough().observation;
  }

  get observationTokenIds(): number[] | null {
    return this.passedThrough().observationTokenIds;
  }

  get action(): string {
    return this.passedThrough().action;
  }

  get actionTokenIds(): number[] {
    return this.passedThrough().actionTokenIds;
  }

  get actionLogProbs(): number[] {
    return this.passedThrough().actionLogProbs;
  }

  /** The five passed-through fields, read once with the schema's own types (stepIndex is read to pass it). */
  private passedThrough(): NonNullable<WireStep['full']> {
    if (this.full === undefined) {
      const f = this.fields;
      const tap = tapAt(this.bytes, this.layout.stepStart);
      f[F.stepIndex]!._read(tap);
      this.full = {
        observation: f[F.observation]!._read(tap) as string,
        observationTokenIds: f[F.observationTokenIds]!._read(tap) as number[] | null,
        action: f[F.action]!._read(tap) as string,
        actionTokenIds: f[F.actionTokenIds]!._read(tap) as number[],
        actionLogProbs: f[F.actionLogProbs]!._read(tap) as number[],
      };
    }
    return this.full;
  }
}

/** The number of action tokens of a step, without decoding them when it is a WireStep. */
export function actionTokenCount(step: Pick<StepEvent, 'actionTokenIds'>): number {
  return step instanceof WireStep ? step.layout.actionTokenCount : step.actionTokenIds.length;
}

/** Reads step events of the registry's current step schema as WireSteps. */
export class WireStepReader {
  private constructor(
    private readonly header: Buffer,
    private readonly fields: readonly FieldType[],
    private readonly maxEventBytes: number,
  ) {}

  /** A reader for the codec's current step schema, or null when it is not the v1 layout this file walks. */
  static of(codec: EventCodec): WireStepReader | null {
    const entry = codec.registry.current('step');
    const fields = recordFieldsOf(entry, 1, STEP_FIELDS);
    return fields === null ? null : new WireStepReader(entry.header, fields, codec.maxEventBytes);
  }

  /**
   * The step in `bytes` as a WireStep, or null when the ordinary decode must handle it (another writer schema,
   * an unusual encoding, or anything the ordinary path would reject: it then gives the error).
   */
  read(bytes: Buffer): WireStep | null {
    if (bytes.length < HEADER_BYTES || bytes.length > this.maxEventBytes) return null;
    // The marker and the writer's fingerprint: only the current step schema's own bytes are walked.
    for (let i = 0; i < HEADER_BYTES; i++) if (bytes[i] !== this.header[i]) return null;
    try {
      return this.walk(bytes);
    } catch {
      return null; // a corrupt datum: the ordinary decode says what is wrong with it
    }
  }

  // One tap for every walk (a walk is synchronous and the field types keep no reference to it).
  private readonly tap = tapAt(Buffer.alloc(0), 0);

  private walk(bytes: Buffer): WireStep | null {
    const f = this.fields;
    const tap = this.tap;
    tap.buf = bytes;
    tap.pos = HEADER_BYTES;
    // The event id is unique per step: read past readStringCached, whose misses copy their bytes into a cache
    // slot that the repeating ids (run, env, group) would hit. The same UTF-8 decoding either way.
    if (!skipString(tap)) return null;
    const eventId = (bytes as Buffer & { utf8Slice(start: number, end: number): string }).utf8Slice(skipped.start, skipped.end);
    const runId = f[F.runId]!._read(tap) as string;
    const envName = f[F.envName]!._read(tap) as string;
    const envVersion = f[F.envVersion]!._read(tap) as string;
    const groupId = f[F.groupId]!._read(tap) as string;
    const episodeId = f[F.episodeId]!._read(tap) as string;
    const stepStart = tap.pos;
    const stepIndex = f[F.stepIndex]!._read(tap) as number;
    if (!skipPassedThrough(tap)) return null;
    const policyVersion = f[F.policyVersion]!._read(tap) as number;
    const reward = f[F.reward]!._read(tap) as number;
    const stepEnd = tap.pos;
    const terminated = f[F.terminated]!._read(tap) as boolean;
    const truncated = f[F.truncated]!._read(tap) as boolean;
    const validStart = tap.pos;
    const actionValid = f[F.actionValid]!._read(tap) as boolean;
    const stateKey = f[F.stateKey]!._read(tap) as string | null;
    const validEnd = tap.pos;
    const metrics = f[F.metrics]!._read(tap) as Record<string, number>;
    const info = f[F.info]!._read(tap) as Record<string, string>;
    const timeStart = tap.pos;
    const eventTimeMs = f[F.eventTimeMs]!._read(tap) as number;
    if (tap.pos !== bytes.length) return null; // truncated, or trailing bytes
    const layout = layoutOf(stepStart, stepEnd, validStart, validEnd, timeStart, tap.pos);
    const step = new WireStep(
      eventId,
      runId,
      envName,
      envVersion,
      groupId,
      episodeId,
      stepIndex,
      policyVersion,
      reward,
      terminated,
      truncated,
      actionValid,
      stateKey,
      metrics,
      info,
      eventTimeMs,
      bytes,
      layout,
      f,
    );
    return validateStepScalars(step).ok ? step : null;
  }
}

interface ReadTap {
  buf: Buffer;
  pos: number;
  readLong(): number;
}

/** What the last skip walked over (one reader on one thread: no allocation per field). */
const skipped = { count: 0, start: 0, end: 0 };

/** Skips a string whose length fits the datum; its UTF-8 bytes are `skipped`. */
function skipString(tap: ReadTap): boolean {
  const len = tap.readLong();
  const start = tap.pos;
  if (!(len >= 0) || start + len > tap.buf.length) return false;
  tap.pos = start + len;
  skipped.count = len;
  skipped.start = start;
  skipped.end = start + len;
  return true;
}

/** Skips one block of ints then the end marker, each an id >= 0 of at most 32 bits; false for anything else. */
function skipTokenIds(tap: ReadTap): boolean {
  const count = tap.readLong();
  const buf = tap.buf;
  const start = tap.pos;
  if (count === 0) return setSkipped(0, start, start);
  if (!(count > 0) || count > buf.length - start) return false;
  let pos = start;
  for (let n = 0; n < count; n++) {
    // Zigzag: an even value is >= 0. At most 5 bytes, the 5th carrying 4 bits (readIntArray's limit).
    if (buf[pos]! & 1) return false;
    let bytes = 1;
    while (buf[pos]! & 0x80) {
      if (++bytes > 5) return false;
      pos++;
    }
    if (bytes === 5 && buf[pos]! & 0xf0) return false;
    pos++;
  }
  if (pos >= buf.length || buf[pos] !== 0) return false; // another block follows (or the datum ends)
  tap.pos = pos + 1;
  return setSkipped(count, start, pos);
}

/** Skips one block of floats then the end marker, each finite and <= 0; false for anything else. */
function skipLogProbs(tap: ReadTap): boolean {
  const count = tap.readLong();
  const buf = tap.buf;
  const start = tap.pos;
  if (count === 0) return setSkipped(0, start, start);
  const end = start + 4 * count;
  if (!(count > 0) || end >= buf.length || buf[end] !== 0) return false;
  // Checked on the bits of each little-endian float32, without reading it: finite and <= 0 is the sign bit set
  // with an exponent below 0xff (not -Infinity, not a NaN), or +0 (all bits clear).
  for (let pos = start; pos < end; pos += 4) {
    const high = buf[pos + 3]!;
    if (high & 0x80) {
      if ((high & 0x7f) === 0x7f && buf[pos + 2]! & 0x80) return false; // exponent 0xff: -Infinity or a NaN
    } else if (high !== 0 || buf[pos + 2] !== 0 || buf[pos + 1] !== 0 || buf[pos] !== 0) return false; // > 0, or a NaN
  }
  tap.pos = end + 1;
  return setSkipped(count, start, end);
}

/** Where the last skipPassedThrough found the token arrays (one reader on one thread, as `skipped`). */
const passed = {
  observationTokenCount: -1,
  observationTokensStart: 0,
  observationTokensEnd: 0,
  actionTokenCount: 0,
  actionTokensStart: 0,
  actionTokensEnd: 0,
  logProbsStart: 0,
  logProbsEnd: 0,
};

/** Skips observation … actionLogProbs, checked as validateEvent checks them; where their arrays lie goes to `passed`. */
function skipPassedThrough(tap: ReadTap): boolean {
  if (!skipString(tap)) return false; // observation
  const union = tap.readLong();
  passed.observationTokenCount = -1;
  passed.observationTokensStart = 0;
  passed.observationTokensEnd = 0;
  if (union === 1) {
    if (!skipTokenIds(tap)) return false;
    passed.observationTokenCount = skipped.count;
    passed.observationTokensStart = skipped.start;
    passed.observationTokensEnd = skipped.end;
  } else if (union !== 0) return false;
  if (!skipString(tap)) return false; // action
  if (!skipTokenIds(tap)) return false;
  passed.actionTokenCount = skipped.count;
  passed.actionTokensStart = skipped.start;
  passed.actionTokensEnd = skipped.end;
  if (!skipLogProbs(tap) || skipped.count !== passed.actionTokenCount) return false;
  passed.logProbsStart = skipped.start;
  passed.logProbsEnd = skipped.end;
  return true;
}

/** The layout of the step just walked: its three trajectory ranges, and its arrays from `passed`. */
function layoutOf(stepStart: number, stepEnd: number, validStart: number, validEnd: number, timeStart: number, timeEnd: number): StepLayout {
  return {
    stepStart,
    stepEnd,
    validStart,
    validEnd,
    timeStart,
    timeEnd,
    observationTokenCount: passed.observationTokenCount,
    observationTokensStart: passed.observationTokensStart,
    observationTokensEnd: passed.observationTokensEnd,
    actionTokenCount: passed.actionTokenCount,
    actionTokensStart: passed.actionTokensStart,
    actionTokensEnd: passed.actionTokensEnd,
    logProbsStart: passed.logProbsStart,
    logProbsEnd: passed.logProbsEnd,
  };
}

function setSkipped(count: number, start: number, end: number): true {
  skipped.count = count;
  skipped.start = start;
  skipped.end = end;
  return true;
}
