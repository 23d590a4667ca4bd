// One TestScheduler for the assembly marble tests, with a matcher that compares errors by name and
// message only (stack traces differ between the expected and the actual error).
import assert from 'node:assert/strict';
import { TestScheduler } from 'rxjs/testing';

function withoutStacks(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map(withoutStacks);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutStacks(v)]));
  }
  return value;
}

export function createTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => assert.deepStrictEqual(withoutStacks(actual), withoutStacks(expected)));
}
