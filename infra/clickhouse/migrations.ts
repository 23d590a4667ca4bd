// Versioned migrations for the analytics tables: infra/clickhouse/migrations/NNNN_name.sql, applied in order,
// each recorded in <database>.schema_migrations once all its statements ran. Statements should be idempotent
// (IF NOT EXISTS) so a migration interrupted half-way can simply run again. The files are written for 18.16, the
// oldest server trajflow runs on; where a later release takes a statement in another form, the runner asks the
// server its version and picks the form per statement (statementsFor), and says which it picked. One difference so
// far: 18.16 has no ADD COLUMN IF NOT EXISTS (19.1 added it), so there each ALTER TABLE … ADD COLUMN adds one column
// and one that finds its column already there is done (runStatement); 19.1 and later run it with IF NOT EXISTS.
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
  /** The server's version, as `SELECT version()` gave it. */
  readonly server: string;
}

/** What the runner needs of a connection to the database (ClickHouseHttp has it). */
export type MigrationClient = Pick<ClickHouseHttp, 'exec' | 'queryJson'>;

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  name String,
  applied_at DateTime
) ENGINE = MergeTree() ORDER BY version`;

export async function appliedVersions(client: MigrationClient): Promise<number[]> {
  // DISTINCT: two migrators racing could both record a version; the statements themselves are idempotent.
  const rows = await client.queryJson<{ version: number }>('SELECT DISTINCT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => Number(r.version));
}

/** A server version: its text ('18.16.1', '26.7.2.1') and the release (major.minor) the forms depend on. */
export interface ServerVersion {
  readonly text: string;
  readonly major: number;
  readonly minor: number;
}

/** Parses `SELECT version()`; a text it cannot read counts as 18.16, whose forms every later release runs too. */
export function parseServerVersion(text: string): ServerVersion {
  const match = /^(\d+)\.(\d+)/.exec(text.trim());
  return match ? { text: text.trim(), major: Number(match[1]), minor: Number(match[2]) } : { text: text.trim(), major: 18, minor: 16 };
}

const atLeast = (version: ServerVersion, [major, minor]: readonly [number, number]): boolean => version.major > major || (version.major === major && version.minor >= minor);

/** A statement the files write in 18.16's form that later releases run in another, and from which release. */
interface StatementForm {
  /** The newer form, as the log names it. */
  readonly name: string;
  /** The 18.16 form, as the log names it. */
  readonly oldName: string;
  readonly since: readonly [major: number, minor: number];
  readonly matches: (statement: string) => boolean;
  readonly rewrite: (statement: string) => string;
}

const ADD_COLUMN = /^ALTER\s+TABLE\s[^;]*\bADD\s+COLUMN\b/i;
const PLAIN_ADD_COLUMN = /\bADD\s+COLUMN\s+(?!IF\s+NOT\s+EXISTS\b)/i;

const FORMS: readonly StatementForm[] = [
  {
    name: 'ADD COLUMN IF NOT EXISTS (ClickHouse 19.1 and later)',
    oldName: 'ADD COLUMN, a column already there taken as added (ClickHouse before 19.1)',
    since: [19, 1],
    matches: (statement) => ADD_COLUMN.test(statement) && PLAIN_ADD_COLUMN.test(statement),
    rewrite: (statement) => statement.replace(new RegExp(PLAIN_ADD_COLUMN.source, 'gi'), 'ADD COLUMN IF NOT EXISTS '),
  },
];

export interface PlannedStatement {
  readonly sql: string;
  /** The form picked for this server (the log's name for it); null when the statement has one form only. */
  readonly form: string | null;
}

/** The statements of a migration's SQL as the server at `version` takes them. */
export function statementsFor(sql: string, version: ServerVersion): PlannedStatement[] {
  return splitStatements(sql).map((statement) => {
    const form = FORMS.find((f) => f.matches(statement));
    if (form === undefined) return { sql: statement, form: null };
    return atLeast(version, form.since) ? { sql: form.rewrite(statement), form: form.name } : { sql: statement, form: form.oldName };
  });
}

/** The forms picked for a migration's statements, each with how many statements took it, for the log. */
export function describeForms(statements: readonly PlannedStatement[]): string[] {
  const counts = new Map<string, number>();
  for (const { form } of statements) if (form !== null) counts.set(form, (counts.get(form) ?? 0) + 1);
  return [...counts].map(([form, n]) => `${form} for ${n} statement${n === 1 ? '' : 's'}`);
}

export async function serverVersion(client: MigrationClient): Promise<ServerVersion> {
  const [row] = await client.queryJson<{ version: string }>('SELECT version() AS version');
  return parseServerVersion(String(row?.version ?? ''));
}

/** Runs one statement; an ADD COLUMN whose column exists (the migration run again, or by a second migrator) has nothing left to do. */
async function runStatement(client: MigrationClient, statement: string): Promise<void> {
  try {
    await client.exec(statement);
  } catch (error) {
    if (error instanceof ClickHouseError && ADD_COLUMN.test(statement) && /column with this name already exists/.test(error.message)) return;
    throw error;
  }
}

export interface MigrationOptions {
  readonly migrations?: readonly Migration[];
  readonly log?: (line: string) => void;
}

/** Applies the migrations the database has not seen, in version order, in the forms its server takes. */
export async function runMigrations(client: MigrationClient, options: MigrationOptions = {}): Promise<Omit<MigrationReport, 'database'>> {
  await client.exec(MIGRATIONS_TABLE);
  const version = await serverVersion(client);
  const done = new Set(await appliedVersions(client));
  const applied: Migration[] = [];
  for (const migration of options.migrations ?? listMigrations()) {
    if (done.has(migration.version)) continue;
    options.log?.(`clickhouse: applying migration ${migration.version} ${migration.name}`);
    const statements = statementsFor(readFileSync(migration.file, 'utf8'), version);
    for (const form of describeForms(statements)) options.log?.(`clickhouse: migration ${migration.version} on ClickHouse ${version.text}: ${form}`);
    for (const statement of statements) await runStatement(client, statement.sql);
    // now() on the server: no client clock or time zone involved. The name is [a-z0-9_] (checked above).
    await client.exec(`INSERT INTO schema_migrations (version, name, applied_at) SELECT ${migration.version}, '${migration.name}', now()`);
    applied.push(migration);
  }
  return { applied, versions: await appliedVersions(client), server: version.text };
}

/** Creates the database if missing and applies the migrations it has not seen, in version order. */
export async function applyMigrations(config: Pick<TrajflowConfig, 'clickhouse'>, options: MigrationOptions = {}): Promise<MigrationReport> {
  const database = config.clickhouse.database;
  await clickHouseClient(config, null).exec(`CREATE DATABASE IF NOT EXISTS ${database}`);
  return { database, ...(await runMigrations(clickHouseClient(config), options)) };
}
