// The query layer for GET /v1/dead-letters: strict parameters (ClickHouse 18.16 has no bound parameters,
// so nothing unchecked may reach the SQL), bounded results and windows, and the SQL built from them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpProblem } from '../../core/problem.js';
import { CLOCK_SKEW_MS, DEFAULT_LIMIT, DEFAULT_WINDOW_MS, deadLettersSql, deadLetterView, parseDeadLetterQuery, type DeadLetterRow } from '../../storage/query/dead-letters.js';
import { sqlInt, sqlString } from '../../storage/query/sql.js';

const NOW = 1_764_400_000_000;

test('defaults: the newest 100 dead letters of the last day', () => {
  assert.deepEqual(parseDeadLetterQuery({}, NOW), {
    limit: DEFAULT_LIMIT,
    sinceMs: NOW + CLOCK_SKEW_MS - DEFAULT_WINDOW_MS,
    untilMs: NOW + CLOCK_SKEW_MS,
    order: 'desc',
  });
});

test('every parameter is read', () => {
  assert.deepEqual(parseDeadLetterQuery({ limit: '1000', sinceMs: '5', untilMs: '10', order: 'asc', reason: 'bad-json' }, NOW), {
    limit: 1000,
    sinceMs: 5,
    untilMs: 10,
    order: 'asc',
    reason: 'bad-json',
  });
});

const bad: Array<[string, Record<string, unknown>, string]> = [
  ['limit 0', { limit: '0' }, 'limit'],
  ['limit over 1000', { limit: '1001' }, 'limit'],
  ['a limit with an exponent', { limit: '1e3' }, 'limit'],
  ['a limit with spaces', { limit: ' 5' }, 'limit'],
  ['a fractional sinceMs', { sinceMs: '1.5' }, 'sinceMs'],
  ['a negative sinceMs', { sinceMs: '-1' }, 'sinceMs'],
  ['sinceMs with SQL in it', { sinceMs: '0 OR 1=1' }, 'sinceMs'],
  ['sinceMs after untilMs', { sinceMs: '20', untilMs: '10' }, 'sinceMs'],
  ['a window over 90 days', { sinceMs: '0', untilMs: String(NOW) }, 'sinceMs'],
  ['an order that is not asc or desc', { order: 'random()' }, 'order'],
  ['a reason with a quote', { reason: "x' OR '1'='1" }, 'reason'],
  ['a parameter given twice', { limit: ['1', '2'] }, 'limit'],
  ['an unknown parameter', { limt: '5' }, 'limt'],
];

for (const [what, query, field] of bad) {
  test(`${what} is a 400 naming ${field}`, () => {
    assert.throws(
      () => parseDeadLetterQuery(query, NOW),
      (error: unknown) => error instanceof HttpProblem && error.status === 400 && error.problem.field === field,
    );
  });
}

test('the SQL holds only the validated values, bounded by LIMIT and the window', () => {
  const sql = deadLettersSql({ limit: 7, sinceMs: 100, untilMs: 200, order: 'asc', reason: 'bad-json' });
  assert.match(sql, /FROM dead_letters FINAL/);
  assert.match(sql, /WHERE event_time_ms >= 100 AND event_time_ms < 200 AND reason = 'bad-json'/);
  assert.match(sql, /ORDER BY event_time_ms ASC/);
  assert.match(sql, /LIMIT 7$/);
  assert.doesNotMatch(deadLettersSql({ limit: 1, sinceMs: 0, untilMs: 1, order: 'desc' }), /reason =/);
});

test('SQL literals: integers must be safe integers, strings are escaped', () => {
  assert.equal(sqlInt(42), '42');
  assert.throws(() => sqlInt(1.5), RangeError);
  assert.throws(() => sqlInt(Number.NaN), RangeError);
  assert.equal(sqlString("it's"), "'it\\'s'");
  assert.equal(sqlString('a\\b'), "'a\\\\b'");
  assert.equal(sqlString('line\nbreak'), "'line\\x0abreak'");
});

test('a row becomes a view with base64 key and payload preview', () => {
  const row: DeadLetterRow = {
    reason: 'bad-json',
    detail: 'the body is not valid JSON',
    source_topic: 'http:/v1/steps',
    source_partition: -1,
    source_offset: -1,
    key_is_null: 1,
    key_hex: '',
    payload_bytes: 3,
    payload_head_hex: '7b7b7b',
    event_time_ms: NOW,
    kafka_topic: 'trajflow.deadletter',
    kafka_partition: 0,
    kafka_offset: 12,
  };
  const view = deadLetterView(row);
  assert.equal(view.keyBase64, null);
  assert.equal(Buffer.from(view.payloadBase64, 'base64').toString(), '{{{');
  assert.equal(view.payloadTruncated, false);
  assert.equal(view.deadLetterOffset, 12);
  assert.equal(deadLetterView({ ...row, key_is_null: 0, key_hex: '6b' }).keyBase64, Buffer.from('k').toString('base64'));
});
