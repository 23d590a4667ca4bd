// Writes a PlannedSample's event: its own fields through the sample schema's avsc types, and its four
// per-token arrays each as one block — token ids and log-probs copied from the steps' bytes, the loss mask
// and the advantages filled from counts. The bytes are the codec's for the same sample whenever the steps'
// token ids were written as the shortest varints (every Avro encoder we know writes them so); otherwise they
// differ only in those varints and decode to the same sample.
import type { EventCodec } from '../../schemas/index.js';
import type { WritableTap } from '../../schemas/tap.js';
import { copyBytes, fillBytes, repeatFloat, WireEventWriter } from '../../schemas/wire-writer.js';
import type { PlannedSample, PlannedTurn } from './planned-sample.js';

const SAMPLE_FIELDS = [
  'sampleId',
  'runId',
  'groupId',
  'episodeId',
  'policyVersion',
  'tokenIds',
  'lossMask',
  'advantages',
  'behaviourLogProbs',
  'reward',
  'estimator',
  'groupSize',
  'groupRewardMean',
  'groupRewardStd',
  'stepAdvantages',
  'eventTimeMs',
  'batch',
] as const;
const TOKEN_IDS = SAMPLE_FIELDS.indexOf('tokenIds');
const REWARD = SAMPLE_FIELDS.indexOf('reward');

/** Zigzag varint bytes of a loss-mask value: 0 → 0x00, 1 → 0x02. */
const MASK_OFF = 0x00;
const MASK_ON = 0x02;

export class PlannedSampleWriter {
  private constructor(private readonly writer: WireEventWriter) {}

  /** null when the current sample schema is not the v2 layout this writer knows. */
  static of(codec: EventCodec): PlannedSampleWriter | null {
    const writer = WireEventWriter.of(codec, 'sample', 2, SAMPLE_FIELDS);
    return writer === null ? null : new PlannedSampleWriter(writer);
  }

  encode(sample: PlannedSample): Buffer {
    const fields = this.writer.fields;
    const values = sample as unknown as Record<string, unknown>;
    return this.writer.write('sample', (tap) => {
      for (let i = 0; i < TOKEN_IDS; i++) fields[i]!._write(tap, values[SAMPLE_FIELDS[i]!]);
      const n = sample.tokenCount;
      const turns = sample.turns;
      // tokenIds
      arrayOf(tap, n, () => {
        for (const turn of turns) {
          writeObservationIds(tap, turn);
          const { layout, bytes } = turn.step;
          copyBytes(tap, bytes, layout.actionTokensStart, layout.actionTokensEnd);
        }
      });
      // lossMask: 0 on what the environment returned, 1 on what the policy generated
      arrayOf(tap, n, () => {
        for (const turn of turns) {
          fillBytes(tap, MASK_OFF, turn.observationCount);
          fillBytes(tap, MASK_ON, turn.actionCount);
        }
      });
      // advantages: 0 on observation tokens, the turn's advantage on its action tokens
      arrayOf(tap, n, () => {
        for (const turn of turns) {
          fillBytes(tap, 0, 4 * turn.observationCount);
          repeatFloat(tap, turn.advantage, turn.actionCount);
        }
      });
      // behaviourLogProbs: 0 on observation tokens, the step's own floats on its action tokens
      arrayOf(tap, n, () => {
        for (const turn of turns) {
          fillBytes(tap, 0, 4 * turn.observationCount);
          const { layout, bytes } = turn.step;
          copyBytes(tap, bytes, layout.logProbsStart, layout.logProbsEnd);
        }
      });
      for (let i = REWARD; i < SAMPLE_FIELDS.length; i++) fields[i]!._write(tap, values[SAMPLE_FIELDS[i]!]);
    });
  }
}

/** An Avro array of n items as one block (avsc writes a non-empty array so: count, items, 0). */
function arrayOf(tap: WritableTap, n: number, items: () => void): void {
  if (n > 0) {
    tap.writeLong(n);
    items();
  }
  tap.writeLong(0);
}

/** A turn's kept observation ids: the step's varints from the observationFrom-th on, or the tokenizer's. */
function writeObservationIds(tap: WritableTap, turn: PlannedTurn): void {
  if (turn.observationCount === 0) return;
  if (turn.observationIds !== null) {
    const ids = turn.observationIds;
    for (let t = turn.observationFrom; t < ids.length; t++) tap.writeLong(ids[t]!);
    return;
  }
  const { bytes, layout } = turn.step;
  let start = layout.observationTokensStart;
  // Skip the trimmed ids: each varint ends at a byte below 0x80.
  for (let skipped = 0; skipped < turn.observationFrom; start++) if (bytes[start]! < 0x80) skipped++;
  copyBytes(tap, bytes, start, layout.observationTokensEnd);
}
