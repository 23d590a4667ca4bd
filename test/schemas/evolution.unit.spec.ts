// Schema evolution, named writer > reader as in avsc's tests. The "v2" of step lives in
// test/fixtures/schemas/step/v2.avsc: v1 plus promptTokens (["null","int"], default null) before
// eventTimeMs and toolCalls (array<string>, default []) at the end. It is a test-only schema.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { DecodeError, EventCodec, SchemaError, SchemaRegistry } from '../../schemas/index.js';
import { makeStep } from '../../bench/load/events.js';

const fixtureSchemas = fileURLToPath(new URL('../fixtures/schemas', import.meta.url));
const v1Json = readFileSync(new URL('../../schemas/step/v1.avsc', import.meta.url), 'utf8');
const v2Json = readFileSync(new URL('../fixtures/schemas/step/v2.avsc', import.meta.url), 'utf8');

/** A process built with v1 (the real schemas), which has learned v2 from the schemas topic. */
function v1Process(): EventCodec {
  const registry = SchemaRegistry.fromSchemasDir();
  registry.register(v2Json);
  return new EventCodec(registry);
}

/** A process built with v2 (current) that still knows v1. */
function v2Process(): EventCodec {
  const registry = SchemaRegistry.fromSchemasDir(fixtureSchemas);
  registry.addVersion('step', 1, v1Json);
  return new EventCodec(registry);
}

describe('step schema evolution', () => {
  test('resolve step v1 > v2: the new fields take their defaults', () => {
    const step = makeStep({}, 3);
    const bytes = v1Process().encode('step', step);
    const read = v2Process().decode('step', bytes) as unknown as Record<string, unknown>;
    assert.deepStrictEqual(read, { ...step, promptTokens: null, toolCalls: [] });
  });

  test('resolve step v2 > v1: the fields v1 does not know are skipped', () => {
    const v2 = v2Process();
    assert.equal(v2.registry.current('step').version, 2);
    const step = { ...makeStep({}, 4), promptTokens: 512, toolCalls: ['search("lake")', 'look()'] };
    const bytes = v2.encode('step', step as never);
    assert.deepStrictEqual(v1Process().decode('step', bytes), makeStep({}, 4));
    // and v2 reads its own events without a resolver
    assert.deepStrictEqual(v2.decode('step', bytes), step);
  });

  test('a writer the reader cannot resolve (a field without default) fails as wrong-event', () => {
    const v2 = JSON.parse(v2Json) as { fields: { name: string; default?: unknown }[] };
    const bad = { ...v2, fields: v2.fields.map((f) => (f.name === 'toolCalls' ? { ...f, default: undefined } : f)) };
    const writerRegistry = new SchemaRegistry();
    writerRegistry.addVersion('step', 1, v1Json); // v1 is current here ...
    const readerRegistry = new SchemaRegistry();
    readerRegistry.addVersion('step', 1, v1Json);
    readerRegistry.addVersion('step', 2, JSON.stringify(bad)); // ... and the reader's current v2 lacks a default
    const bytes = new EventCodec(writerRegistry).encode('step', makeStep());
    assert.throws(() => readerRegistry.resolver(readerRegistry.lookup(bytes.readBigUInt64LE(2))!, readerRegistry.current('step')), SchemaError);
    assert.throws(
      () => new EventCodec(readerRegistry).decode('step', bytes),
      (e: unknown) => e instanceof DecodeError && e.reason === 'wrong-event' && /toolCalls/.test(e.message),
    );
  });

  test('resolvers are built once per writer and reader', () => {
    const v2 = v2Process();
    const writer = v2.registry.lookup(v2.registry.entries().find((e) => e.version === 1)!.fingerprint)!;
    const reader = v2.registry.current('step');
    assert.equal(v2.registry.resolver(writer, reader), v2.registry.resolver(writer, reader));
    assert.equal(v2.registry.resolver(reader, reader), undefined);
  });
});
