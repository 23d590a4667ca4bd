import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CRC64_AVRO_EMPTY, canonicalFormOfJson, crc64Avro, fingerprintBytes, fingerprintHex, fingerprintToSigned, parseFingerprintHex } from '../../schemas/index.js';

interface SpecCase {
  id: string;
  input: string;
  canonical: string;
  fingerprint?: string;
}

const spec = JSON.parse(readFileSync(new URL('../fixtures/avro/schema-tests.json', import.meta.url), 'utf8')) as { cases: SpecCase[] };

describe('CRC-64-AVRO', () => {
  test('the fingerprint of no bytes is EMPTY', () => {
    assert.equal(crc64Avro(new Uint8Array()), 0xc15d213aa4d7a795n);
    assert.equal(CRC64_AVRO_EMPTY, 0xc15d213aa4d7a795n);
  });

  test('"int" fingerprints to 0x7275d51a3f395c8f, written 8f 5c 39 3f 1a d5 75 72', () => {
    const fp = crc64Avro('"int"');
    assert.equal(fp, 0x7275d51a3f395c8fn);
    assert.equal(fingerprintHex(fp), '7275d51a3f395c8f');
    assert.equal(fingerprintBytes(fp).toString('hex'), '8f5c393f1ad57572');
  });

  for (const c of spec.cases.filter((c) => c.fingerprint !== undefined)) {
    test(`spec vector ${c.id}: ${c.canonical.slice(0, 60)}`, () => {
      const fp = crc64Avro(canonicalFormOfJson(c.input));
      assert.equal(fingerprintToSigned(fp).toString(), c.fingerprint);
    });
  }

  test('hex round trip, and a bad hex string is refused', () => {
    assert.equal(parseFingerprintHex('7275d51a3f395c8f'), 0x7275d51a3f395c8fn);
    assert.equal(fingerprintHex(0x1n), '0000000000000001');
    assert.throws(() => parseFingerprintHex('7275d51a'), RangeError);
  });
});
