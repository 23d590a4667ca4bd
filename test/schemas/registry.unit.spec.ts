import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { canonicalFormOfJson, crc64Avro, eventNames, listSchemaFiles, SchemaError, SchemaRegistry } from '../../schemas/index.js';
import { registry } from './helpers.js';

const v1Json = readFileSync(new URL('../../schemas/step/v1.avsc', import.meta.url), 'utf8');

describe('SchemaRegistry', () => {
  test('fromSchemasDir loads every version of every event, and the highest is current', () => {
    assert.deepStrictEqual(new Set(registry.entries().map((e) => e.event)), new Set(eventNames));
    const highest = new Map<string, number>();
    for (const file of listSchemaFiles()) highest.set(file.event, Math.max(highest.get(file.event) ?? 0, file.version));
    assert.equal(highest.get('sample'), 2, 'the sample schema is at v2 (its rollout batch)');
    assert.ok(
      registry.entries().some((e) => e.event === 'sample' && e.version === 1),
      'v1 samples stay readable',
    );
    for (const event of eventNames) {
      const entry = registry.current(event);
      assert.equal(entry.version, highest.get(event));
      assert.equal(entry.fingerprint, crc64Avro(entry.canonical));
      assert.equal(entry.header.toString('hex'), `c301${Buffer.from(entry.fingerprintHex, 'hex').reverse().toString('hex')}`);
      assert.equal(entry.canonical, canonicalFormOfJson(entry.schema));
      assert.match(entry.schema, /"doc"/, 'entries keep the full schema text, docs and defaults included');
    }
  });

  test('lookup by bigint or by hex', () => {
    const entry = registry.current('trajectory');
    assert.equal(registry.lookup(entry.fingerprint), entry);
    assert.equal(registry.lookup(entry.fingerprintHex), entry);
    assert.equal(registry.lookup(1n), undefined);
  });

  test('register infers the event from the record name, and is idempotent', () => {
    const fresh = new SchemaRegistry();
    const entry = fresh.register(v1Json);
    assert.equal(entry.event, 'step');
    assert.equal(entry.version, 0, 'a learned schema has no version unless told');
    assert.equal(fresh.register(JSON.parse(v1Json) as object, 'step', 1), entry);
    assert.equal(fresh.has('step'), false, 'register never makes a schema current');
    assert.throws(() => fresh.current('step'), SchemaError);
  });

  test('register refuses what it cannot place', () => {
    const fresh = new SchemaRegistry();
    assert.throws(() => fresh.register('{"type":"record","name":"Other","fields":[]}'), /pass the event name/);
    assert.throws(() => fresh.register(v1Json, 'no_such_event'), /not a known event/);
    assert.throws(() => fresh.register('{"type":"record","name":"X","fields":[{"name":"a","type":"nope"}]}', 'step'), SchemaError);
    assert.throws(() => fresh.register('not json'), SchemaError);
    fresh.register(v1Json);
    assert.throws(() => fresh.register(v1Json, 'trajectory'), /already registered for event 'step'/);
  });

  test('a version is one schema; the highest version is current', () => {
    const fresh = new SchemaRegistry();
    const v1 = fresh.addVersion('step', 1, v1Json);
    const other = JSON.parse(v1Json) as { fields: unknown[] };
    other.fields.push({ name: 'extra', type: 'int', default: 0 });
    assert.throws(() => fresh.addVersion('step', 1, other), /already registered/);
    const v3 = fresh.addVersion('step', 3, other);
    assert.equal(fresh.current('step'), v3);
    fresh.addVersion('step', 2, JSON.stringify({ ...other, doc: 'same canonical form as v3' }));
    assert.equal(fresh.current('step'), v3);
    assert.notEqual(fresh.current('step'), v1);
    assert.throws(() => fresh.addVersion('step', 0, v1Json), /version must be an integer >= 1/);
  });
});
