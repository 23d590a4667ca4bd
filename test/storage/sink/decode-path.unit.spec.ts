// The sink's decoding path: an event becomes its rows (each with its table), or, when its bytes are not
// its topic's event, a dead letter with the reason and the bytes where they were read. Bugs are thrown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventDecoder, type Envelope } from '../../../streams/index.js';
import { sampleEvents } from '../../../bench/load/events.js';
import { decodeEvent, type DecodedEvent } from '../../../storage/sink/decode-path.js';
import { codec } from '../../schemas/helpers.js';

const envelope = (value: Buffer | null): Envelope<Buffer | null> => ({
  topic: 'tf.trajectories',
  partition: 4,
  offset: '77',
  key: Buffer.from('k'),
  timestamp: 0,
  value,
  generation: 1,
  ack: () => assert.fail('not acked here'),
});

/** The tables of the decoded rows, or the dead letter. */
const tablesOf = (decoded: DecodedEvent) => (Array.isArray(decoded) ? decoded.map((r) => r.table) : decoded.deadLetter);

test('an event decodes into its rows, one per table, with where it was read', () => {
  const decoded = decodeEvent('trajectory', eventDecoder(codec, 'trajectory'), envelope(codec.encode('trajectory', sampleEvents.trajectory)), {});
  assert.deepEqual(tablesOf(decoded), ['trajectories', 'trajectory_metrics']);
  assert.ok(Array.isArray(decoded) && decoded.every((r) => r.row.kafka_offset === 77 && r.row.kafka_partition === 4));
});

test('sample tokens only when asked for', () => {
  const bytes = codec.encode('sample', sampleEvents.sample);
  const tables = (includeSampleTokens: boolean) => tablesOf(decodeEvent('sample', eventDecoder(codec, 'sample'), envelope(bytes), { includeSampleTokens }));
  assert.deepEqual(tables(false), ['samples']);
  assert.deepEqual(tables(true), ['samples', 'sample_tokens']);
});

test("another event's bytes, garbage or an empty payload: a dead letter with the reason, the key and bytes kept", () => {
  const wrong = codec.encode('step', sampleEvents.step);
  for (const [payload, reason] of [
    [wrong, 'wrong-event'],
    [Buffer.from('not avro at all'), 'bad-marker'],
    [null, 'truncated'],
  ] as const) {
    const decoded = decodeEvent('trajectory', eventDecoder(codec, 'trajectory'), envelope(payload), {});
    assert.ok(!Array.isArray(decoded), 'no rows');
    assert.equal(decoded.deadLetter.reason, reason);
    assert.deepEqual(
      { ...decoded.deadLetter, detail: undefined, reason: undefined },
      { reason: undefined, detail: undefined, sourceTopic: 'tf.trajectories', sourcePartition: 4, sourceOffset: '77', key: Buffer.from('k'), payload },
    );
  }
});

test("a failure that is not the input's (a bug) is thrown, not dead-lettered", () => {
  const bug = () => {
    throw new TypeError('bug');
  };
  assert.throws(() => decodeEvent('trajectory', bug, envelope(Buffer.alloc(1)), {}), TypeError);
});
