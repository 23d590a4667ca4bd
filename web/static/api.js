// Calls to the /v1 API. Reads need no token on loopback; a server bound elsewhere asks for a bearer
// token, which the page keeps for this tab only (sessionStorage) and sends in the Authorization header,
// never in a URL.
const TOKEN_KEY = 'trajflow.token';

export class ApiError extends Error {
  constructor(status, detail, path) {
    super(`${path}: ${detail}`);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
  }
}

export const enc = encodeURIComponent;

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/** GETs JSON; a problem response becomes an ApiError with its detail. */
export async function getJson(path, { signal } = {}) {
  const response = await fetch(path, { headers: { Accept: 'application/json', ...authHeaders() }, signal });
  const text = await response.text();
  let body = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // a proxy's HTML error page
  }
  if (!response.ok) throw new ApiError(response.status, body?.detail ?? body?.title ?? `HTTP ${response.status}`, path);
  return body;
}

/** True for the error a fetch throws when the page aborted it (navigation). */
export function isAbort(error) {
  return error?.name === 'AbortError';
}
