// The history SQL: literals are escaped; the grad-norm rule follows the config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gradNormSpikeSql, learnerStepsSql, rolloutBatchesSql } from '../../detectors/history.js';
import { sqlString as sqlLiteral } from '../../storage/query/sql.js';

test('run ids enter the SQL only as escaped literals', () => {
  assert.equal(sqlLiteral("it's a \\ run\n"), "'it\\'s a \\\\ run\\x0a'");
  for (const sql of [learnerStepsSql("x' OR 1=1 --"), rolloutBatchesSql("x' OR 1=1 --"), gradNormSpikeSql("x' OR 1=1 --")]) {
    assert.ok(sql.includes("'x\\' OR 1=1 --'"));
    assert.ok(!sql.includes("'x' OR"));
  }
});

test('gradNormSpikeSql: log space by default, the configured window, warm-up and k', () => {
  const sql = gradNormSpikeSql('r', { window: 30, warmup: 10, k: 5 });
  assert.match(sql, /arrayMap\(x -> log\(x\), norms\)/);
  assert.match(sql, /greatest\(1, i - 30\), least\(i - 1, 30\)/);
  assert.match(sql, /previous >= 10 AND z > 5 AS spike/);
  assert.match(sql, /grad_norm_pre_clip > 0/);
  const linear = gradNormSpikeSql('r', { logScale: false });
  assert.match(linear, /arrayMap\(x -> x, norms\)/);
  assert.match(linear, /0\.05 \* abs\(med\)/);
  assert.doesNotMatch(linear, /grad_norm_pre_clip > 0/);
});
