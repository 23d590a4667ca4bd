// Versioned migrations for the analytics tables: infra/clickhouse/migrations/NNNN_name.sql, applied in order,
// each recorded in <database>.schema_migrations once all its statements ran. Statements should be idempotent
// (IF NOT EXISTS) so a migration interrupted half-way can simply run again. 18.16 has no ADD COLUMN IF NOT
// EXISTS: one column per ALTER TABLE … ADD COLUMN, and one that finds its column already there is done (runStatement).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../core/errors.js';
import type { TrajflowConfig } from '../../core/config.js';
import { ClickHouseError, type ClickHouseHttp, clickHouseClient } from './http.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly file: string;
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Parses and orders migration file names; rejects duplicates and names that look like migrations but are not. */
export function parseMigrationNames(files: readonly string[], dir = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  const seen = new Map<number, string>();
  for (const file of files) {
    if (!file.endsWith('.sql')) continue;
    const match = FILE_NAME.exec(file);
    if (!match) throw new ConfigError(`migration file ${file} in ${dir} must be named NNNN_snake_name.sql (four digits, lowercase).`);
    const version = Number(match[1]);
    const other = seen.get(version);
    if (other !== undefined) throw new ConfigError(`migrations ${other} and ${file} in ${dir} have the same version ${version}: renumber one.`);
    seen.set(version, file);
    migrations.push({ version, name: match[2]!, file: join(dir, file) });
  }
  return migrations.sort((a, b) => a.version - b.version);
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return parseMigrationNames(readdirSync(dir), dir);
}

/**
 * Splits a SQL file into statements on ';' outside quotes and comments (the HTTP interface runs one per request).
 * Comment-only pieces are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    const next = sql[i + 1];
    if (ch === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end; // drop the comment, keep the newline
      continue;
    }
    if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
      current += ' ';
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      while (j < sql.length && sql[j] !== ch) j += sql[j] === '\\' ? 2 : 1;
      current += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === ';') {
      if (current.trim() !== '') statements.push(current.trim());
      current = '';
      i += 1;
      continue;
    }
    current += ch;
    i += 1;
  }
  if (current.trim() !== '') statements.push(current.trim());
  return statements;
}

export interface MigrationReport {
  readonly database: string;
  readonly applied: Migration[];
  /** Every version recorded after the run, ascending. */
  readonly versions: number[];
}

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  name String,
  applied_at DateTime
) ENGINE = MergeTree() ORDER BY version`;

export async function appliedVersions(client: ClickHouseHttp): Promise<number[]> {
  // DISTINCT: two migrators racing could both record a version; the statements themselves are idempotent.
  const rows = await client.queryJson<{ version: number }>('SELECT DISTINCT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => Number(r.version));
}

const ADD_COLUMN = /^ALTER\s+TABLE\s[^;]*\bADD\s+COLUMN\b/i;

/** Runs one statement; an ADD COLUMN whose column exists (the migration run again, or by a second migrator) has nothing left to do. */
async function runStatement(client: ClickHouseHttp, statement: string): Promise<void> {
  try {
    await client.exec(statement);
  } catch (error) {
    if (error instanceof ClickHouseError && ADD_COLUMN.test(statement) && /column with this name already exists/.test(error.message)) return;
    throw error;
  }
}

/** Creates the database if missing and applies the migrations it has not seen, in version order. */
export async function applyMigrations(
  config: Pick<TrajflowConfig, 'clickhouse'>,
  options: { migrations?: readonly Migration[]; log?: (line: string) => void } = {},
): Promise<MigrationReport> {
  const database = config.clickhouse.database;
  await clickHouseClient(config, null).exec(`CREATE DATABASE IF NOT EXISTS ${database}`);
  const client = clickHouseClient(config);
  await client.exec(MIGRATIONS_TABLE);
  const done = new Set(await appliedVersions(client));
  const applied: Migration[] = [];
  for (const migration of options.migrations ?? listMigrations()) {
    if (done.has(migration.version)) continue;
    options.log?.(`clickhouse: applying migration ${migration.version} ${migration.name}`);
    for (const statement of splitStatements(readFileSync(migration.file, 'utf8'))) await runStatement(client, statement);
    // now() on the server: no client clock or time zone involved. The name is [a-z0-9_] (checked above).
    await client.exec(`INSERT INTO schema_migrations (version, name, applied_at) SELECT ${migration.version}, '${migration.name}', now()`);
    applied.push(migration);
  }
  return { database, applied, versions: await appliedVersions(client) };
}
