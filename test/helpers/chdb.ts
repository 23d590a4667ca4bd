// A current ClickHouse engine in this process (chdb, ClickHouse 26.x) behind the surface the tests use of the HTTP
// client: run a statement, read JSON rows, insert a JSONEachRow body. One session per test file, in a temporary
// directory of its own that close() removes; errors are ClickHouseErrors carrying the engine's message, as over HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'chdb';
import { ClickHouseError } from '../../infra/clickhouse/http.js';

const asClickHouseError = (error: unknown, sql: string): ClickHouseError =>
  new ClickHouseError(`chdb: ${(error as Error).message} (while running: ${sql.replace(/\s+/g, ' ').slice(0, 160)})`, null, { cause: error });

export class ChdbStore {
  private constructor(
    private readonly session: Session,
    private readonly dir: string,
    readonly database: string,
  ) {}

  /** A fresh engine with an empty database `database`, the default of every statement. */
  static open(database = 'trajflow'): ChdbStore {
    const dir = mkdtempSync(join(tmpdir(), 'trajflow-chdb-'));
    // 64-bit integers as JSON numbers, as the HTTP client asks of the server.
    const session = new Session(dir, { connectionArgs: ['--output_format_json_quote_64bit_integers=0'] });
    session.query(`CREATE DATABASE IF NOT EXISTS ${database}`);
    session.query(`USE ${database}`);
    return new ChdbStore(session, dir, database);
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.session.queryAsync(sql, { format: 'TabSeparated' });
    } catch (error) {
      throw asClickHouseError(error, sql);
    }
  }

  /** The rows of a SELECT as objects (FORMAT JSONEachRow added here, as ClickHouseHttp.queryJson does). */
  async queryJson<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    const trimmed = sql.trim().replace(/;$/, '');
    let text: string;
    try {
      text = (await this.session.queryAsync(`${trimmed}\nFORMAT JSONEachRow`)).text();
    } catch (error) {
      throw asClickHouseError(error, sql);
    }
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as T);
  }

  /** Inserts a JSONEachRow body (storage/sink/rows.ts jsonEachRowBody: bytes when a row has binary cells). */
  async insertJsonEachRow(table: string, body: string | Buffer): Promise<void> {
    if (body.length === 0) return;
    try {
      await this.session.insert({ table: `${this.database}.${table}`, values: body, format: 'JSONEachRow' });
    } catch (error) {
      throw asClickHouseError(error, `INSERT INTO ${table} FORMAT JSONEachRow`);
    }
  }

  /** Ends the session and removes its directory. */
  close(): void {
    this.session.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
