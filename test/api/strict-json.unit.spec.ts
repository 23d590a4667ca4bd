// Unit: JSON bodies read strictly (api/strict-json.ts): bytes that are not UTF-8 and keys named twice are
// refused (saying where), everything JSON.parse reads otherwise is read as JSON.parse reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { findDuplicateKey, firstInvalidUtf8, parseStrictJson } from '../../api/strict-json.js';

const bytes = (...parts: Array<string | number[]>): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

test('bytes that are not UTF-8 are refused with their offset; well-formed UTF-8 of every length is read', () => {
  const bad: Array<[string, number[]]> = [
    ['a byte that cannot start a character', [0xff]],
    ['a lone continuation byte', [0x80]],
    ['an overlong NUL (C0 80)', [0xc0, 0x80]],
    ['an overlong slash (E0 80 AF)', [0xe0, 0x80, 0xaf]],
    ['an encoded surrogate (ED A0 80, what avsc wrote for "\\ud800")', [0xed, 0xa0, 0x80]],
    ['a truncated 3-byte character', [0xe2, 0x82]],
    ['a character past U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
    ['C3 28', [0xc3, 0x28]],
  ];
  for (const [what, seq] of bad) {
    const raw = bytes('{"observation": "ab', seq, '"}');
    const result = parseStrictJson(raw);
    assert.equal(result.ok, false, what);
    if (!result.ok) {
      assert.equal(result.reason, 'bad-json', what);
      assert.match(result.detail, /not valid UTF-8: the bytes from offset 19 /, what);
    }
  }
  const good = bytes('{"a": "', [0x24, 0xc2, 0xa2, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xef, 0xbf, 0xbd], '\\u0000"}');
  assert.deepEqual(parseStrictJson(good), { ok: true, value: { a: '$¢€😀\uFFFD\u0000' } });
});

test('firstInvalidUtf8 agrees with node:buffer isUtf8 on any bytes, and points at a byte the decoder cannot read from', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 24 }),
        fc.string({ unit: 'binary' }).map((s) => new Uint8Array(Buffer.from(s))),
      ),
      (raw) => {
        const at = firstInvalidUtf8(raw);
        assert.equal(at === -1, isUtf8(raw));
        if (at >= 0) {
          assert.ok(isUtf8(raw.subarray(0, at)), 'everything before it is UTF-8');
          assert.equal(isUtf8(raw.subarray(at)), false);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test('a key named twice is refused with its path; the same key in sibling objects, escaped strings and arrays are fine', () => {
  const cases: Array<[string, string | undefined]> = [
    ['{"a": 1, "a": 2}', 'a'],
    ['{"a": 1, "\\u0061": 2}', 'a'],
    ['{"steps": [{"a": 1}, {"b": 1, "c": {"d": 1, "d": 2}}]}', 'steps[1].c.d'],
    ['{"x y": {"k": 1, "k": 1}}', '["x y"].k'],
    ['{"m": {"a b": 1, "a b": 2}}', 'm["a b"]'],
    ['[[{"a": 1}], [{"a": 1, "a": 1}]]', '[1][0].a'],
    ['{"steps": [{"a": 1}, {"a": 1}]}', undefined],
    ['{"a": {"a": {"a": 1}}}', undefined],
    ['{"a": "\\"a\\": 1, \\"a\\"", "b": "{\\"b\\":1}", "c": "\\\\"}', undefined],
    ['{"a": [1, {"b": 2}, "}"], "c": {}, "d": []}', undefined],
    ['{}', undefined],
  ];
  for (const [text, path] of cases) {
    assert.doesNotThrow(() => JSON.parse(text), text);
    assert.equal(findDuplicateKey(text)?.path, path, text);
    const result = parseStrictJson(Buffer.from(text));
    if (path === undefined) assert.deepEqual(result, { ok: true, value: JSON.parse(text) }, text);
    else {
      assert.equal(result.ok, false, text);
      if (!result.ok) {
        assert.equal(result.reason, 'duplicate-key');
        assert.equal(result.field, path);
      }
    }
  }
});

test('property: JSON.stringify never repeats a key, and one key written twice at any depth is found', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => assert.equal(findDuplicateKey(JSON.stringify(value)), undefined)),
    { numRuns: 1000 },
  );
  const doubled = fc.record({
    key: fc.string(),
    first: fc.jsonValue(),
    second: fc.jsonValue(),
    others: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    depth: fc.nat(3),
  });
  fc.assert(
    fc.property(doubled, ({ key, first, second, others, depth }) => {
      // {"<key>": first, ...others and "<key>": second}, inside `depth` levels of {"w": [0, …]}.
      let text = `{${JSON.stringify(key)}: ${JSON.stringify(first)}, ${JSON.stringify({ ...others, [key]: second }).slice(1)}`;
      for (let i = 0; i < depth; i++) text = `{"w": [0, ${text}]}`;
      assert.doesNotThrow(() => JSON.parse(text));
      const found = findDuplicateKey(text);
      assert.equal(found?.key, key, text);
      assert.ok(found!.path.startsWith('w[1].'.repeat(depth).replace(/\.$/, '')), `${found!.path} in ${text}`);
    }),
    { numRuns: 1000 },
  );
});

test('what is not JSON is bad-json, as JSON.parse says', () => {
  const result = parseStrictJson(Buffer.from('{"eventId": '));
  assert.equal(result.ok, false);
  if (!result.ok) {
    assert.equal(result.reason, 'bad-json');
    assert.match(result.detail, /not valid JSON/);
  }
});
