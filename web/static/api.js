// @ts-check
// Calls to the /v1 API. Reads need no token on loopback; a server bound elsewhere asks for a bearer
// token, which the page keeps for this tab only (sessionStorage) and sends in the Authorization header,
// never in a URL.
/** @import { ResponseOf } from './types.js' */
const TOKEN_KEY = 'trajflow.token';

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status
   * @param {string} detail what went wrong, as the server said it
   * @param {string} path the path requested
   */
  constructor(status, detail, path) {
    super(`${path}: ${detail}`);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
  }
}

export const enc = encodeURIComponent;

/** @returns {string | null} */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @param {string} value the token; empty forgets it */
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** @returns {Record<string, string>} */
export function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/** The problem's detail (or title) of a failed response's body, when it has one. */
function problemText(/** @type {unknown} */ body) {
  if (typeof body !== 'object' || body === null) return undefined;
  if ('detail' in body && typeof body.detail === 'string') return body.detail;
  if ('title' in body && typeof body.title === 'string') return body.title;
  return undefined;
}

/**
 * GETs JSON; a problem response becomes an ApiError with its detail. The answer's type follows from the path
 * (ResponseOf in types.d.ts): the server's JSON is trusted to be what its route declares.
 * @template {string} P
 * @param {P} path
 * @param {{ signal?: AbortSignal }} [options]
 * @returns {Promise<ResponseOf<P>>}
 */
export async function getJson(path, { signal } = {}) {
  const response = await fetch(path, { headers: { Accept: 'application/json', ...authHeaders() }, signal });
  const text = await response.text();
  /** @type {unknown} */
  let body = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // a proxy's HTML error page
  }
  if (!response.ok) throw new ApiError(response.status, problemText(body) ?? `HTTP ${response.status}`, path);
  return /** @type {ResponseOf<P>} */ (body);
}

/** True for the error a fetch throws when the page aborted it (navigation). */
export function isAbort(/** @type {unknown} */ error) {
  return typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError';
}
