// The sink's INSERTs over HTTP: RowBinary (row-binary.ts) when ClickHouse reports a type row-binary.ts knows
// for every column of the rows, JSONEachRow (rows.ts) otherwise. Column types are asked of ClickHouse once per
// table (system.columns, on 18.16 and current releases) and asked again after a failed insert, in case a
// migration changed the table meanwhile. RowBinary carries no types: a column whose *type* changed under a
// running sink would be misread, so such a migration needs a sink restart (trajflow's migrations only create
// tables and add columns, which the explicit column list of every INSERT makes harmless).
// Requests go through node:http (node:https for an https:// URL) with a keep-alive agent, not fetch: fetch copied every body into a web
// stream, which cost more than encoding it.
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ClickHouseCredentials } from '../../core/credentials.js';
import { ClickHouseError, clickHouseAuthHeaders, explainRefusedLogin, explainTlsFailure } from '../../infra/clickhouse/http.js';
import type { StepEvent } from '../../schemas/index.js';
import { jsonEachRowBody, stepRows, type Row, type TableName } from './rows.js';
import { ByteWriter, rowBinaryEncoder, type RowBinaryEncoder } from './row-binary.js';
import { STEP_COLUMNS, stepTypesMatch, TranscodedStep } from './step-transcoder.js';

/** A row to insert: its column values, or a steps row already in RowBinary (step-transcoder.ts). */
export type SinkRow = Row | TranscodedStep;

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
  /** Per table: whether ClickHouse's column types are the ones the step transcoder writes. */
  private readonly transcodable = new Map<TableName, boolean>();
  private readonly agent = new Agent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });

  constructor(
    private readonly url: string,
    private readonly database: string,
    private readonly timeoutMs: number,
    private readonly stop: AbortSignal,
    /** Decodes a step's Avro bytes, for transcoded rows the table's column types no longer fit. */
    private readonly decodeStep: (bytes: Buffer) => StepEvent = () => {
      throw new Error('Inserter: TranscodedStep rows need a decodeStep');
    },
    /** Unset: the server's 'default' user without a password. */
    private readonly credentials?: ClickHouseCredentials,
  ) {
    this.base = url.replace(/\/$/, '');
  }

  /** Encodes rows of one table (all with the same columns, as rows.ts makes them). */
  async encode(table: TableName, rows: readonly SinkRow[]): Promise<InsertBody> {
    const first = rows[0];
    const columns = first instanceof TranscodedStep ? STEP_COLUMNS : Object.keys(first ?? {});
    const key = `${table}(${columns.join(',')})`;
    let encoder = this.encoders.get(key);
    if (encoder === undefined) {
      encoder = rowBinaryEncoder(columns, await this.columnTypes(table));
      this.encoders.set(key, encoder);
    }
    const plain = (row: SinkRow): Row => (row instanceof TranscodedStep ? stepRows(this.decodeStep(row.avro), row.source)[0]!.row : row);
    if (encoder === null) return { query: `INSERT INTO ${table} FORMAT JSONEachRow`, data: jsonEachRowBody(rows.map(plain)) };
    // Transcoded rows were written for the steps types; if the table's types changed since, decoded again.
    const transcoded = this.transcodable.get(table) === true;
    // Sized so that it does not grow (growing copies): the transcoded rows' bytes, ≈ 1 kB for each other row.
    let bytes = 1;
    for (const row of rows) bytes += transcoded && row instanceof TranscodedStep ? row.end - row.start : 1024;
    const w = new ByteWriter(bytes);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (!(row instanceof TranscodedStep)) encoder.encodeRow(w, row);
      else if (!transcoded) encoder.encodeRow(w, plain(row));
      else {
        // Rows that follow each other in one chunk are copied as one range.
        let end = row.end;
        for (let next = rows[i + 1]; next instanceof TranscodedStep && next.chunk === row.chunk && next.start === end; next = rows[i + 1]) {
          end = next.end;
          i++;
        }
        w.rangeOf(row.chunk, row.start, end);
      }
    }
    return { query: `INSERT INTO ${table} (${columns.map((c) => `\`${c}\``).join(', ')}) FORMAT RowBinary`, data: w.result() };
  }

  /** Whether steps may be transcoded (step-transcoder.ts): the steps types are known and the transcoder's. */
  get transcodesSteps(): boolean {
    return this.transcodable.get('steps') === true;
  }

  /** Asks ClickHouse for a table's column types now (not at its first insert); a failure is left to that insert. */
  prepare(table: TableName): Promise<void> {
    return this.columnTypes(table).then(
      () => undefined,
      () => undefined,
    );
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
    this.transcodable.delete(table);
    for (const key of this.encoders.keys()) if (key.startsWith(`${table}(`)) this.encoders.delete(key);
  }

  private columnTypes(table: TableName): Promise<Map<string, string>> {
    let types = this.types.get(table);
    if (!types) {
      const sql = `SELECT name, type FROM system.columns WHERE database = ${quoteString(this.database)} AND table = ${quoteString(table)} FORMAT JSONEachRow`;
      types = this.post(sql, '', `reading the columns of ${table}`).then((text) => {
        const lines = text.split('\n').filter((line) => line !== '');
        const known = new Map(lines.map((line) => JSON.parse(line) as { name: string; type: string }).map(({ name, type }) => [name, type]));
        if (table === 'steps') this.transcodable.set(table, stepTypesMatch(known));
        return known;
      });
      types.catch(() => this.types.delete(table));
      this.types.set(table, types);
    }
    return types;
  }

  /** Closes the idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
    this.httpsAgent.destroy();
  }

  private post(query: string, data: string | Buffer, what: string, retryStale = true): Promise<string> {
    const target = new URL(`${this.base}/?${new URLSearchParams({ database: this.database, query })}`);
    return new Promise<string>((resolve, reject) => {
      // A certificate no retry can make trusted is a ConfigError; anything else is an outage, retried.
      const unreachable = (error: Error) =>
        reject(
          explainTlsFailure(error, this.url) ??
            new ClickHouseError(`ClickHouse at ${this.url} is not reachable (${error.message}) while ${what}`, null, { retriable: true, cause: error }),
        );
      const headers = clickHouseAuthHeaders(this.credentials);
      const secure = target.protocol === 'https:';
      const send = secure ? httpsRequest : request;
      const req = send(target, { method: 'POST', agent: secure ? this.httpsAgent : this.agent, timeout: this.timeoutMs, signal: this.stop, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', unreachable);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(text);
          else reject(explainRefusedLogin(status, text, this.url, this.credentials) ?? new ClickHouseError(`ClickHouse: ${text.trim()} (while ${what})`, status));
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
