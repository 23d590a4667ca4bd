import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigError } from '../../core/errors.js';
import { describeForms, listMigrations, parseMigrationNames, parseServerVersion, splitStatements, statementsFor } from '../../infra/clickhouse/migrations.js';

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

test('server versions: major and minor from version(); a text that is not one counts as 18.16', () => {
  assert.deepEqual(parseServerVersion('18.16.1'), { text: '18.16.1', major: 18, minor: 16 });
  assert.deepEqual(parseServerVersion(' 26.7.2.1\n'), { text: '26.7.2.1', major: 26, minor: 7 });
  assert.deepEqual(parseServerVersion(''), { text: '', major: 18, minor: 16 });
});

test('ADD COLUMN runs as written before 19.1 and with IF NOT EXISTS from 19.1 on; other statements are the same everywhere', () => {
  const sql = `CREATE TABLE IF NOT EXISTS t (a String) ENGINE = MergeTree() PARTITION BY tuple() ORDER BY a;
ALTER TABLE t ADD COLUMN b Array(String) AFTER a;
ALTER TABLE t ADD COLUMN IF NOT EXISTS c UInt8;`;
  const old = statementsFor(sql, parseServerVersion('18.16.1'));
  const current = statementsFor(sql, parseServerVersion('26.7.2.1'));
  assert.deepEqual(
    old.map((s) => s.sql),
    splitStatements(sql),
  );
  assert.deepEqual(
    current.map((s) => s.sql),
    [splitStatements(sql)[0], 'ALTER TABLE t ADD COLUMN IF NOT EXISTS b Array(String) AFTER a', 'ALTER TABLE t ADD COLUMN IF NOT EXISTS c UInt8'],
  );
  assert.deepEqual(
    old.map((s) => s.form),
    [null, 'ADD COLUMN, a column already there taken as added (ClickHouse before 19.1)', null],
  );
  assert.deepEqual(describeForms(current), ['ADD COLUMN IF NOT EXISTS (ClickHouse 19.1 and later) for 1 statement']);
  assert.equal(statementsFor(sql, parseServerVersion('19.1.6'))[1]!.form, 'ADD COLUMN IF NOT EXISTS (ClickHouse 19.1 and later)');
  assert.equal(statementsFor(sql, parseServerVersion('18.14.19'))[1]!.form, 'ADD COLUMN, a column already there taken as added (ClickHouse before 19.1)');
});

test('the shipped migrations: the same statements on every version but for their ADD COLUMNs', () => {
  for (const m of listMigrations()) {
    const sql = readFileSync(m.file, 'utf8');
    const old = statementsFor(sql, parseServerVersion('18.16.1'));
    const current = statementsFor(sql, parseServerVersion('26.7.2.1'));
    assert.equal(old.length, current.length);
    old.forEach((statement, i) => {
      if (/^ALTER TABLE \w+ ADD COLUMN /.test(statement.sql)) assert.equal(current[i]!.sql, statement.sql.replace('ADD COLUMN ', 'ADD COLUMN IF NOT EXISTS '), m.file);
      else assert.equal(current[i]!.sql, statement.sql, m.file);
    });
  }
});
