import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigError } from '../../core/errors.js';
import { listMigrations, parseMigrationNames, splitStatements } from '../../infra/clickhouse/migrations.js';

test('migrations are ordered by version whatever order the folder lists them in', () => {
  const parsed = parseMigrationNames(['0010_later.sql', '0002_second.sql', 'README.md', '0001_first.sql'], '/m');
  assert.deepEqual(
    parsed.map((m) => [m.version, m.name, m.file]),
    [
      [1, 'first', '/m/0001_first.sql'],
      [2, 'second', '/m/0002_second.sql'],
      [10, 'later', '/m/0010_later.sql'],
    ],
  );
});

test('two migrations with one version, or a badly named one, are refused with a fix', () => {
  assert.throws(
    () => parseMigrationNames(['0001_a.sql', '0001_b.sql']),
    (e: unknown) => e instanceof ConfigError && /same version 1/.test(e.message),
  );
  assert.throws(() => parseMigrationNames(['1_a.sql']), /NNNN_snake_name\.sql/);
  assert.throws(() => parseMigrationNames(['0003_Bad-Name.sql']), /NNNN_snake_name\.sql/);
});

test('statements split on semicolons outside quotes and comments', () => {
  const sql = `-- a comment; with a semicolon
CREATE TABLE a (x String DEFAULT 'a;b') ENGINE = Memory;
/* block; comment */ SELECT ";" ;
-- trailing comment only
`;
  assert.deepEqual(splitStatements(sql), ["CREATE TABLE a (x String DEFAULT 'a;b') ENGINE = Memory", 'SELECT ";"']);
  assert.deepEqual(splitStatements("SELECT 'it\\'s; fine'"), ["SELECT 'it\\'s; fine'"]);
  assert.deepEqual(splitStatements('-- nothing\n'), []);
});

test('the shipped migrations parse, start at 1 and have no gaps', () => {
  const migrations = listMigrations();
  assert.ok(migrations.length >= 1);
  migrations.forEach((m, i) => assert.equal(m.version, i + 1));
});

test('the shipped migrations use only SQL that ClickHouse 18.16 understands', () => {
  for (const m of listMigrations()) {
    const sql = readFileSync(m.file, 'utf8');
    for (const statement of splitStatements(sql)) {
      assert.doesNotMatch(statement, /DateTime64|entropy\s*\(|\bMap\s*\(|LowCardinality|JSON\b|\bUUID\b|CODEC|TTL/i, `${m.file}: ${statement.slice(0, 60)}`);
      if (/^CREATE TABLE/i.test(statement)) {
        assert.match(statement, /IF NOT EXISTS/, 'CREATE TABLE must be idempotent');
        assert.match(statement, /ENGINE = \w*MergeTree\(\)\s+PARTITION BY .+\s+ORDER BY /s, 'MergeTree() PARTITION BY … ORDER BY … syntax');
      }
    }
  }
});

test('the first migration has one table per event kind, each with Kafka coordinates', () => {
  const first = listMigrations()[0]!;
  const statements = splitStatements(readFileSync(first.file, 'utf8'));
  const tables = statements.map((s) => /CREATE TABLE IF NOT EXISTS (\w+)/.exec(s)?.[1]).filter(Boolean);
  assert.deepEqual(tables, ['steps', 'trajectories', 'samples', 'learner_steps', 'policy_versions', 'collapse_alerts', 'dead_letters']);
  for (const s of statements) for (const c of ['kafka_topic String', 'kafka_partition Int32', 'kafka_offset Int64']) assert.ok(s.includes(c), c);
});
