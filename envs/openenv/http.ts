// GET of the server's JSON endpoints (/health, /schema, /metadata) with Node's fetch and a timeout.
import { OpenEnvHttpError } from './errors.js';

export async function getJson(baseUrl: string, path: string, timeoutMs: number): Promise<unknown> {
  const url = new URL(path, baseUrl).toString();
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    throw new OpenEnvHttpError(url, null, `${(error as Error).message}${cause?.code ? ` (${cause.code})` : ''}`, error);
  }
  const body = await response.text();
  if (!response.ok) throw new OpenEnvHttpError(url, response.status, body.slice(0, 500));
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new OpenEnvHttpError(url, response.status, `the body is not JSON: ${body.slice(0, 200)}`);
  }
}
