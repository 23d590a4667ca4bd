// Errors in Anthropic's shape for POST /v1/messages, `{ "type": "error", "error": { "type", "message" } }`:
// what @anthropic-ai/sdk parses (it raises BadRequestError etc. from the status and reads `error.type`). The
// gateway raises OpenAIErrors everywhere; this maps one to Anthropic's error type by its status, and the
// message keeps the field it names (`messages[1].content: …`), since Anthropic's shape has no `param`. Pure.
import type { OpenAIError } from './openai-error.js';

/** Anthropic's error types (docs.anthropic.com, "Errors"). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  readonly type: 'error';
  readonly error: { readonly type: AnthropicErrorType; readonly message: string };
}

/** The Anthropic error type of an HTTP status. */
export function anthropicTypeOf(status: number): AnthropicErrorType {
  const byStatus: Readonly<Record<number, AnthropicErrorType>> = {
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return byStatus[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export function anthropicErrorBody(error: OpenAIError): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicTypeOf(error.status), message: error.message } };
}
