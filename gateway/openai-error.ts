// Errors in OpenAI's shape, `{ "error": { "message", "type", "param", "code" } }`: what the official clients
// parse (openai-node raises BadRequestError etc. from the status and reads `error.message`). A 4xx about the
// request names the field in `param` (`messages[2].role`, `max_tokens`), so an agent's author sees at once
// which argument to change.

/** OpenAI's error types; `upstream_error` is trajflow's: the model server behind the gateway failed. */
export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'upstream_error';

export interface OpenAIErrorBody {
  readonly error: { readonly message: string; readonly type: OpenAIErrorType; readonly param: string | null; readonly code: string | null };
}

export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: OpenAIErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Response headers that go with it (Retry-After, WWW-Authenticate). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'OpenAIError';
  }

  get body(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A 400 about one field of the request. */
export function invalidParam(param: string, message: string, code = 'invalid_value'): OpenAIError {
  return new OpenAIError(400, `${param}: ${message}`, 'invalid_request_error', param, code);
}

/** The OpenAI error type that goes with an HTTP status (for errors raised as problem details by api/ modules). */
export function typeOfStatus(status: number): OpenAIErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The error with its `param` in the request's own words (`messages` → `input`) when the endpoint translated that field. */
export function inRequestTerms(error: unknown, names: Readonly<Record<string, string>> | undefined): unknown {
  if (!names || !(error instanceof OpenAIError) || error.param === null) return error;
  const param = names[error.param];
  if (param === undefined) return error;
  const message = error.message.startsWith(`${error.param}:`) ? `${param}${error.message.slice(error.param.length)}` : error.message;
  return new OpenAIError(error.status, message, error.type, param, error.code, error.headers);
}
