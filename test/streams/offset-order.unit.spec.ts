// offsetAtLeast orders kafkajs offset strings as their BigInt values do, across lengths and up to int64's maximum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { offsetAtLeast } from '../../streams/offset-order.js';

test('unit: offsetAtLeast(a, b) is BigInt(a) >= BigInt(b) for offsets of any length', () => {
  const offset = fc.oneof(fc.nat({ max: 1000 }).map(BigInt), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n })).map(String);
  fc.assert(
    fc.property(offset, offset, (a, b) => offsetAtLeast(a, b) === BigInt(a) >= BigInt(b)),
    { numRuns: 2000 },
  );
  assert.equal(offsetAtLeast('10', '9'), true); // not the strings' order
  assert.equal(offsetAtLeast('9', '10'), false);
  assert.equal(offsetAtLeast('7', '7'), true);
});
