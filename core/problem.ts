// RFC 9457 problem details: the one shape every error response of the API has. Handlers throw an
// HttpProblem (or return one from a check); the error middleware turns it, and anything else, into
// `application/problem+json` without ever echoing a stack trace or an internal message.
import { TrajflowError } from './errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** A problem type: a stable URI (not meant to be dereferenced) and its fixed title and status. */
export interface ProblemType {
  readonly slug: string;
  readonly title: string;
  readonly status: number;
}

/** The problem types the API answers with; `type` is `urn:trajflow:problem:<slug>`. */
export const problemTypes = {
  invalidBody: { slug: 'invalid-body', title: 'The request body is not valid', status: 400 },
  invalidStep: { slug: 'invalid-step', title: 'A step event is not valid', status: 400 },
  invalidQuery: { slug: 'invalid-query', title: 'A query parameter is not valid', status: 400 },
  invalidPath: { slug: 'invalid-path-parameter', title: 'A path parameter is not valid', status: 400 },
  unauthenticated: { slug: 'unauthenticated', title: 'A bearer token is required', status: 401 },
  forbidden: { slug: 'forbidden', title: 'The bearer token is not accepted', status: 403 },
  notFound: { slug: 'not-found', title: 'No such resource', status: 404 },
  methodNotAllowed: { slug: 'method-not-allowed', title: 'Method not allowed on this resource', status: 405 },
  ambiguous: { slug: 'ambiguous', title: 'More than one resource matches', status: 409 },
  tooLarge: { slug: 'too-large', title: 'The request is too large', status: 413 },
  unsupportedMediaType: { slug: 'unsupported-media-type', title: 'Unsupported content type', status: 415 },
  rateLimited: { slug: 'rate-limited', title: 'Too many steps for this token', status: 429 },
  internal: { slug: 'internal', title: 'Internal server error', status: 500 },
  kafkaUnavailable: { slug: 'kafka-unavailable', title: 'Kafka is not available', status: 503 },
  clickhouseUnavailable: { slug: 'clickhouse-unavailable', title: 'ClickHouse is not available', status: 503 },
  tooManyStreams: { slug: 'too-many-streams', title: 'Too many open event streams', status: 503 },
} as const satisfies Record<string, ProblemType>;

/** Extension members (RFC 9457 §3.2): e.g. `field`, `index`, `pointer`, `reason`, `retryAfterSeconds`. */
export type ProblemExtensions = Record<string, string | number | boolean | null>;

export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly [extension: string]: string | number | boolean | null;
}

const RESERVED = new Set(['type', 'title', 'status', 'detail', 'instance']);

export function problemTypeUri(type: ProblemType): string {
  return `urn:trajflow:problem:${type.slug}`;
}

/** Builds a problem-details body; extensions cannot overwrite the standard members. */
export function problem(type: ProblemType, detail: string, extensions: ProblemExtensions = {}): ProblemDetails {
  const body: Record<string, string | number | boolean | null> = { type: problemTypeUri(type), title: type.title, status: type.status, detail };
  for (const [name, value] of Object.entries(extensions)) {
    if (RESERVED.has(name)) throw new RangeError(`problem extension '${name}' would overwrite a standard member`);
    body[name] = value;
  }
  return body as ProblemDetails;
}

/** An error that is the client's (or a service's) and maps to one response; thrown by handlers. */
export class HttpProblem extends TrajflowError {
  readonly problem: ProblemDetails;
  /** Response headers that go with it (WWW-Authenticate, Retry-After, Allow …). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(type: ProblemType, detail: string, extensions: ProblemExtensions = {}, headers: Record<string, string> = {}) {
    super(`HTTP_${type.status}`, detail, { retriable: type.status === 429 || type.status === 503 });
    this.problem = problem(type, detail, extensions);
    this.headers = Object.freeze({ ...headers });
  }

  get status(): number {
    return this.problem.status;
  }
}
