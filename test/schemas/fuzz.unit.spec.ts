// avsc's random() values for every event: our codec must round-trip them and agree with plain avsc
// byte for byte (which checks the fast paths in schemas/avro-*.ts against the reference).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventNames, type EventName } from '../../schemas/index.js';
import { codec, datumOf, plain, referenceType } from './helpers.js';

const ROUNDS = 200;

describe('random() fuzz', () => {
  for (const event of eventNames) {
    test(`${event}: ${ROUNDS} random values round-trip and match avsc's bytes`, () => {
      const reference = referenceType(event);
      for (let i = 0; i < ROUNDS; i++) {
        const value = plain((reference as unknown as { random(): unknown }).random());
        const bytes = codec.encode(event, value as never);
        const expected = reference.toBuffer(value);
        assert.deepStrictEqual(datumOf(bytes), expected);
        // Floats come back rounded to float32, exactly as plain avsc reads them.
        assert.deepStrictEqual(codec.decode(event as EventName, bytes), plain(reference.fromBuffer(expected)));
      }
    });
  }
});
