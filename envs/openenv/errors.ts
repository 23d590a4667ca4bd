// Named errors of the OpenEnv adapter, rooted at TrajflowError. Transport failures (connection lost,
// timeout, server unreachable) are retriable: a new connection may well work. What the server says
// (an error message, an unhealthy status, a schema we cannot use) is not.
import { TrajflowError } from '../../core/errors.js';

/** The server answered an OpenEnv request with {"type":"error"}: its message and code are kept. */
export class OpenEnvServerError extends TrajflowError {
  /** The server's code, e.g. EXECUTION_ERROR, VALIDATION_ERROR, CAPACITY_REACHED. */
  readonly serverCode: string;
  /** The whole `data` of the error message (pydantic's `errors` list, capacity counts …). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(request: string, serverCode: string, serverMessage: string, details: Record<string, unknown>) {
    // CAPACITY_REACHED clears when another session ends, so it is worth retrying; the others are not.
    super('OPENENV_SERVER', `OpenEnv server refused ${request}: ${serverCode}: ${serverMessage}`, {
      retriable: serverCode === 'CAPACITY_REACHED',
    });
    this.serverCode = serverCode;
    this.details = details;
  }
}

/** An HTTP endpoint (/health, /schema, /metadata) answered with a non-2xx status or not at all. */
export class OpenEnvHttpError extends TrajflowError {
  readonly status: number | null;

  constructor(url: string, status: number | null, detail: string, cause?: unknown) {
    super('OPENENV_HTTP', `GET ${url} failed: ${status === null ? '' : `HTTP ${status}: `}${detail}`, {
      retriable: status === null || status >= 500,
      cause,
    });
    this.status = status;
  }
}

/** /health did not report "healthy". */
export class OpenEnvUnhealthyError extends TrajflowError {
  constructor(url: string, status: string) {
    super('OPENENV_UNHEALTHY', `OpenEnv server at ${url} reports status '${status}', not 'healthy'.`, { retriable: true });
  }
}

/** The server's /schema or /metadata cannot drive this adapter as configured (e.g. the action field does not exist). */
export class OpenEnvSchemaError extends TrajflowError {
  constructor(message: string) {
    super('OPENENV_SCHEMA', message);
  }
}

/** The server sent something that is not an OpenEnv message (bad JSON, unknown type, a reply of the wrong kind). */
export class OpenEnvProtocolError extends TrajflowError {
  constructor(message: string) {
    super('OPENENV_PROTOCOL', message);
  }
}

/** The WebSocket could not be opened, or closed while a request was waiting for its reply. */
export class OpenEnvConnectionError extends TrajflowError {
  constructor(message: string, cause?: unknown) {
    super('OPENENV_CONNECTION', message, { retriable: true, cause });
  }
}

/** No reply within the request timeout; the connection is closed, since a late reply would answer the wrong request. */
export class OpenEnvTimeoutError extends TrajflowError {
  constructor(request: string, timeoutMs: number) {
    super('OPENENV_TIMEOUT', `OpenEnv server did not answer ${request} within ${timeoutMs} ms; the connection was closed.`, { retriable: true });
  }
}

/** The environment was used after close(). */
export class OpenEnvClosedError extends TrajflowError {
  constructor(envName: string) {
    super('OPENENV_CLOSED', `${envName}: the OpenEnv environment was closed; connect a new one.`);
  }
}

/** reset/step was called while another reset/step of the same environment was still waiting for the server. */
export class OpenEnvConcurrentCallError extends TrajflowError {
  constructor(envName: string, call: string, running: string) {
    super('OPENENV_CONCURRENT_CALL', `${envName}: ${call}() called while ${running}() is still running; await each call before the next (one connection is one environment).`);
  }
}
