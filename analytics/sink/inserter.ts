// The sink's INSERTs over HTTP: RowBinary (row-binary.ts) when ClickHouse reports a type row-binary.ts knows
// for every column of the rows, JSONEachRow (rows.ts) otherwise. Column types are asked of ClickHouse once per
// table (system.columns, on 18.16 and current releases) and asked again after a failed insert, in case a
// migration changed the table meanwhile. RowBinary carries no types: a column whose *type* changed under a
// running sink would be misread, so such a migration needs a sink restart (trajflow's migrations only create
// tables and add columns, which the explicit column list of every INSERT makes harmless).
// Requests go through node:http with a keep-alive agent, not fetch: fetch copied every body into a web
// stream, which cost more than encoding it.
import { Agent, request } from 'node:http';
import { ClickHouseError } from '../../infra/clickhouse/http.js';
import { jsonEachRowBody, type Row, type TableName } from './rows.js';
import { rowBinaryEncoder, type RowBinaryEncoder } from './row-binary.js';

/** One encoded batch: the INSERT statement and its data. */
export interface InsertBody {
  readonly query: string;
  readonly data: string | Buffer;
}

const quoteString = (s: string): string => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;

export class Inserter {
  private readonly base: string;
  private readonly types = new Map<TableName, Promise<Map<string, string>>>();
  private readonly encoders = new Map<string, RowBinaryEncoder | null>();
  private readonly agent = new Agent({ keepAlive: true });

  constructor(
    private readonly url: string,
    private readonly database: string,
    private readonly timeoutMs: number,
    private readonly stop: AbortSignal,
  ) {
    this.base = url.replace(/\/$/, '');
  }

  /** Encodes rows of one table (all with the same columns, as rows.ts makes them). */
  async encode(table: TableName, rows: readonly Row[]): Promise<InsertBody> {
    const columns = Object.keys(rows[0] ?? {});
    const key = `${table}(${columns.join(',')})`;
    let encoder = this.encoders.get(key);
    if (encoder === undefined) {
      encoder = rowBinaryEncoder(columns, await this.columnTypes(table));
      this.encoders.set(key, encoder);
    }
    if (encoder === null) return { query: `INSERT INTO ${table} FORMAT JSONEachRow`, data: jsonEachRowBody(rows) };
    return { query: `INSERT INTO ${table} (${columns.map((c) => `\`${c}\``).join(', ')}) FORMAT RowBinary`, data: encoder.encode(rows) };
  }

  async insert(table: TableName, body: InsertBody): Promise<void> {
    try {
      await this.post(body.query, body.data, `inserting into ${table}`);
    } catch (error) {
      this.forget(table);
      throw error;
    }
  }

  /** Drops what is cached about a table's columns (they are asked again at the next encode). */
  forget(table: TableName): void {
    this.types.delete(table);
    for (const key of this.encoders.keys()) if (key.startsWith(`${table}(`)) this.encoders.delete(key);
  }

  private columnTypes(table: TableName): Promise<Map<string, string>> {
    let types = this.types.get(table);
    if (!types) {
      const sql = `SELECT name, type FROM system.columns WHERE database = ${quoteString(this.database)} AND table = ${quoteString(table)} FORMAT JSONEachRow`;
      types = this.post(sql, '', `reading the columns of ${table}`).then((text) => {
        const lines = text.split('\n').filter((line) => line !== '');
        return new Map(lines.map((line) => JSON.parse(line) as { name: string; type: string }).map(({ name, type }) => [name, type]));
      });
      types.catch(() => this.types.delete(table));
      this.types.set(table, types);
    }
    return types;
  }

  /** Closes the idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private post(query: string, data: string | Buffer, what: string, retryStale = true): Promise<string> {
    const target = new URL(`${this.base}/?${new URLSearchParams({ database: this.database, query })}`);
    return new Promise<string>((resolve, reject) => {
      const unreachable = (error: Error) =>
        reject(new ClickHouseError(`ClickHouse at ${this.url} is not reachable (${error.message}) while ${what}`, null, { retriable: true, cause: error }));
      const req = request(target, { method: 'POST', agent: this.agent, timeout: this.timeoutMs, signal: this.stop }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', unreachable);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(text);
          else reject(new ClickHouseError(`ClickHouse: ${text.trim()} (while ${what})`, status));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', (error) => {
        // A kept-alive connection the server closed meanwhile: not an outage; sent once more on a new one.
        if (retryStale && req.reusedSocket && !this.stop.aborted && (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
          this.post(query, data, what, false).then(resolve, reject);
        } else unreachable(error);
      });
      req.end(data);
    });
  }
}
