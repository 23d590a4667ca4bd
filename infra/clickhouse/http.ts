// A thin ClickHouse client over HTTP (fetch). One statement per request; errors carry ClickHouse's message.
// Works against 18.16 and current releases: only the plain HTTP interface and the JSON/JSONEachRow formats.
// A user and password go in an Authorization: Basic header (both understand it; fetch refuses user:pass@ URLs),
// and a refused login is a ConfigError naming the setting, so the command stops at start with exit code 2 — as does
// an https:// server whose certificate this process does not trust.
import type { ClickHouseCredentials } from '../../core/credentials.js';
import { ConfigError, ServiceError } from '../../core/errors.js';
import type { TrajflowConfig } from '../../core/config.js';

export interface ClickHouseClientOptions {
  readonly url: string;
  /** The database unqualified table names refer to; omit to use the server's default. */
  readonly database?: string;
  readonly timeoutMs?: number;
  /** Unset: the server's 'default' user without a password. */
  readonly credentials?: ClickHouseCredentials | undefined;
}

/** The headers that log in as `credentials` (none for the default user without a password). */
export function clickHouseAuthHeaders(credentials: ClickHouseCredentials | undefined): Record<string, string> {
  if (credentials === undefined) return {};
  return { authorization: `Basic ${Buffer.from(`${credentials.user}:${credentials.password.reveal()}`, 'utf8').toString('base64')}` };
}

/**
 * A refused login (18.16: 192 unknown user, 193 wrong password, 194 password required; current releases: 516
 * AUTHENTICATION_FAILED) as a ConfigError that names the settings; undefined for any other answer.
 */
export function explainRefusedLogin(status: number, text: string, url: string, credentials: ClickHouseCredentials | undefined): ConfigError | undefined {
  if (!/^Code: (19[234]|516)\b/.test(text.trim()) && !(status === 401 || (status === 403 && /Authentication failed/i.test(text)))) return undefined;
  const said = credentials?.password.reveal() ? text.trim().split(credentials.password.reveal()).join('[redacted]') : text.trim();
  const who = credentials ? `user '${credentials.user}'` : "the 'default' user without a password";
  const fix = credentials ? `check TRAJFLOW_CLICKHOUSE_USER and ${credentials.password.setting}` : 'set TRAJFLOW_CLICKHOUSE_USER and TRAJFLOW_CLICKHOUSE_PASSWORD';
  return new ConfigError(`ClickHouse at ${url} refused the login of ${who} (${said}): ${fix}.`);
}

/** Node's codes for a server certificate this process does not trust (or that does not name the host). */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A TLS failure no retry can mend — a certificate this process does not trust, or an https:// URL on a plain HTTP
 * port — as a ConfigError that says what to set; undefined for any other failure to connect (those are retried).
 */
export function explainTlsFailure(error: unknown, url: string): ConfigError | undefined {
  // node:https puts the code on the error itself (the sink), fetch on the error's cause (this client).
  const coded = [error, error instanceof Error ? error.cause : undefined].find(
    (e): e is NodeJS.ErrnoException & { code: string } => e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string',
  );
  if (coded === undefined) return undefined;
  const { code, message: said } = coded;
  if (UNTRUSTED_CERTIFICATE.has(code))
    return new ConfigError(
      `ClickHouse at ${url}: its TLS certificate is not trusted here (${code}: ${said}). For a private CA start node with ` +
        'NODE_EXTRA_CA_CERTS=<the CA file> (docs/guides/cluster.md); check TRAJFLOW_CLICKHOUSE_URL names the host the certificate is for.',
    );
  // OpenSSL's "wrong version number": the first bytes back were not a TLS record (a plain HTTP answer).
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (code === 'EPROTO' && said.includes('wrong version number')))
    return new ConfigError(`ClickHouse at ${url} does not speak TLS on that port (it answered in plain text): check TRAJFLOW_CLICKHOUSE_URL (http://, or the HTTPS port).`);
  return undefined;
}

/** A ClickHouse error (the server's message) or an unreachable server (retriable). */
export class ClickHouseError extends ServiceError {
  readonly status: number | null;
  constructor(message: string, status: number | null, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options);
    this.status = status;
  }
}

const brief = (sql: string): string => {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat;
};

export class ClickHouseHttp {
  readonly url: string;
  readonly database: string | undefined;
  private readonly timeoutMs: number;
  private readonly credentials: ClickHouseCredentials | undefined;

  constructor(options: ClickHouseClientOptions) {
    this.url = options.url.replace(/\/$/, '');
    this.database = options.database;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.credentials = options.credentials;
  }

  /** Same server, another database (or none, for CREATE DATABASE). */
  withDatabase(database: string | undefined): ClickHouseHttp {
    return new ClickHouseHttp({ url: this.url, database, timeoutMs: this.timeoutMs, credentials: this.credentials });
  }

  private async send(params: Record<string, string>, body: string, what: string): Promise<string> {
    const search = new URLSearchParams(params);
    if (this.database !== undefined) search.set('database', this.database);
    let response: Response;
    try {
      response = await fetch(`${this.url}/?${search}`, {
        method: 'POST',
        body,
        headers: clickHouseAuthHeaders(this.credentials),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const tls = explainTlsFailure(error, this.url);
      if (tls) throw tls;
      throw new ClickHouseError(
        `ClickHouse at ${this.url} is not reachable (${(error as Error).message}) while running: ${what}. Run 'trajflow up' or check TRAJFLOW_CLICKHOUSE_URL.`,
        null,
        { retriable: true, cause: error },
      );
    }
    const text = await response.text();
    if (!response.ok) {
      const refused = explainRefusedLogin(response.status, text, this.url, this.credentials);
      if (refused) throw refused;
      // ClickHouse answers with "Code: N, e.displayText() = DB::Exception: …" (18.x) or "Code: N. DB::Exception: …".
      throw new ClickHouseError(`ClickHouse: ${text.trim()} (while running: ${what})`, response.status, {
        retriable: response.status >= 500 && /TOO_MANY|timeout|Timeout/.test(text),
      });
    }
    return text;
  }

  /** Runs a statement and returns the raw response text (TabSeparated unless the SQL names a FORMAT). */
  query(sql: string): Promise<string> {
    return this.send({}, sql, brief(sql));
  }

  /** Runs a statement that returns nothing (DDL, INSERT … SELECT). */
  async exec(sql: string): Promise<void> {
    await this.send({}, sql, brief(sql));
  }

  /**
   * Runs a SELECT and returns its rows as objects. 64-bit integers come back as JSON numbers, not strings
   * (exact up to 2^53, which covers millisecond times and offsets).
   */
  async queryJson<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    const trimmed = sql.trim().replace(/;$/, '');
    if (/\bFORMAT\s+\w+\s*$/i.test(trimmed)) throw new ServiceError(`queryJson adds FORMAT JSONEachRow itself; remove the FORMAT clause from: ${brief(sql)}`);
    const text = await this.send({ output_format_json_quote_64bit_integers: '0' }, `${trimmed}\nFORMAT JSONEachRow`, brief(sql));
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as T);
  }

  /** Inserts rows (objects keyed by column name) with one request. */
  async insertJsonEachRow(table: string, rows: readonly object[]): Promise<void> {
    if (rows.length === 0) return;
    const body = rows.map((row) => JSON.stringify(row)).join('\n');
    await this.send({ query: `INSERT INTO ${table} FORMAT JSONEachRow` }, body, `INSERT INTO ${table} (${rows.length} rows)`);
  }

  /** True when GET /ping answers "Ok.". */
  async ping(timeoutMs = 2000): Promise<boolean> {
    try {
      const response = await fetch(`${this.url}/ping`, { signal: AbortSignal.timeout(timeoutMs) });
      return response.ok && (await response.text()).startsWith('Ok');
    } catch (error) {
      // Not answering yet is false; a certificate no wait can make trusted is the user's to fix.
      const tls = explainTlsFailure(error, this.url);
      if (tls) throw tls;
      return false;
    }
  }
}

/** A client for the configured server and database; pass `null` for no database (server-level statements). */
export function clickHouseClient(config: Pick<TrajflowConfig, 'clickhouse'>, database: string | null = config.clickhouse.database): ClickHouseHttp {
  return new ClickHouseHttp({ url: config.clickhouse.url, database: database ?? undefined, credentials: config.clickhouse.credentials });
}
