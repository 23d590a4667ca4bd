// unit: the step transcoder on its worker thread (TranscodePool): rows come back in submission order with the
// bytes the main-thread transcoder writes, declined payloads are handed back for the decoding path, and
// idle() waits for everything submitted. A real worker thread; no Kafka.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KafkaSource } from '../../../storage/sink/rows.js';
import { StepChunks, type TranscodedStep } from '../../../storage/sink/step-transcoder.js';
import { TranscodePool, type StepEnvelope } from '../../../storage/sink/transcode-pool.js';
import { codec } from '../../schemas/helpers.js';
import { makeStep } from '../../../bench/load/events.js';

const header = codec.registry.current('step').header;

function envelope(value: Buffer, offset: number): StepEnvelope {
  return { topic: 'trajflow.env.steps', partition: offset % 4, offset: String(offset), key: null, timestamp: 0, value, generation: 1, ack: () => undefined };
}

const rowBytes = (row: TranscodedStep<KafkaSource>) => Buffer.from(row.chunk.target.subarray(row.start, row.end));

test('rows in submission order, byte for byte those of the main-thread transcoder; declined payloads handed back', async () => {
  const payloads = Array.from({ length: 1203 }, (_, i) => codec.encode('step', makeStep({ eventId: `pool-${i}`, stepIndex: i % 7 }, i)));
  // Two payloads the transcoder declines: a wrong header byte, and a truncated datum.
  payloads[17] = Buffer.concat([Buffer.from([0]), payloads[17]!.subarray(1)]);
  payloads[900] = payloads[900]!.subarray(0, payloads[900]!.length - 3);
  const envelopes = payloads.map((value, i) => envelope(value, 5_000_000_000 + i));
  const rows: TranscodedStep<StepEnvelope>[] = [];
  const declined: StepEnvelope[] = [];
  const errors: Error[] = [];
  const pool = new TranscodePool({ header, maxEventBytes: codec.maxEventBytes }, { row: (row) => rows.push(row), declined: (e) => declined.push(e), error: (e) => errors.push(e) });
  try {
    for (const e of envelopes) pool.submit(e);
    await pool.idle();
    assert.deepEqual(errors, []);
    assert.deepEqual(
      declined.map((e) => e.offset),
      [envelopes[17]!.offset, envelopes[900]!.offset],
    );
    assert.equal(rows.length, envelopes.length - 2);
    const expected = envelopes.filter((_, i) => i !== 17 && i !== 900);
    const local = new StepChunks(header, codec.maxEventBytes);
    rows.forEach((row, i) => {
      assert.equal(row.source, expected[i], `row ${i} carries its envelope`);
      assert.equal(row.avro, expected[i]!.value);
      const mine = local.transcode(expected[i]!.value, expected[i]!);
      assert.ok(mine);
      assert.deepEqual(rowBytes(row), rowBytes(mine), `row ${i}: the worker's bytes are the main thread's`);
    });
  } finally {
    await pool.close();
  }
  assert.deepEqual(errors, [], 'closing is not a failure');
});

test('idle() resolves at once with nothing submitted, and after a later submission comes back', async () => {
  const rows: unknown[] = [];
  const pool = new TranscodePool(
    { header, maxEventBytes: codec.maxEventBytes },
    { row: (row) => rows.push(row), declined: () => assert.fail('declined'), error: (e) => assert.fail(e) },
  );
  try {
    await pool.idle();
    pool.submit(envelope(codec.encode('step', makeStep({ eventId: 'late' }, 1)), 1));
    await pool.idle();
    assert.equal(rows.length, 1);
  } finally {
    await pool.close();
  }
});
