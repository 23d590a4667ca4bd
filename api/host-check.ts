// DNS rebinding and cross-site requests. A page on evil.example can make the browser's name for it resolve to
// 127.0.0.1 and then read this server as if it were its own origin: the request arrives on loopback, where
// reads need no token, with `Host: evil.example:18080`. So the Host header is checked against an allow-list,
// on by default when the server is bound to loopback: localhost, 127.0.0.1 and [::1] with the port the request
// came in on, plus the names configured (TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: `name` for any port, `name:port`
// for one; `*` turns the check off). A browser's cross-site request carries an Origin: it must name an
// allowed host too (or, with the check off, the request's own Host), so another site's page cannot make
// the browser write to or read from the API.
//
// The answer is 403 problem details, not 421 Misdirected Request: 421 says the connection reached a server
// that is not configured for the authority (RFC 9110 §15.5.20) and invites the client to retry on another
// connection — which would reach this same server again. 403 says what is true: this server refuses to
// answer for that name, and retrying will not help. One status for Host and Origin, with `field` naming which.
import type { Request, RequestHandler } from 'express';
import { HttpProblem, type ProblemType } from '../core/problem.js';

export const hostNotAllowed = { slug: 'host-not-allowed', title: 'The Host or Origin is not one this server answers', status: 403 } as const satisfies ProblemType;

/** Loopback names allowed (with the server's port) whenever the check is on. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

interface Authority {
  /** Lower case; an IPv6 address in brackets. */
  readonly name: string;
  readonly port: number;
}

const AUTHORITY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

/** An allow-list entry: a name for any port (port null), or name:port. */
export interface AllowedHost {
  readonly name: string;
  readonly port: number | null;
}

/** `name`, `name:port`, `[v6]`, `[v6]:port` (lower case, a trailing dot dropped); undefined when malformed. */
export function parseAllowedHost(raw: string): AllowedHost | undefined {
  const match = AUTHORITY.exec(raw.trim());
  if (!match) return undefined;
  const port = match[2] === undefined ? null : Number(match[2]);
  if (port !== null && (port < 1 || port > 65535)) return undefined;
  return { name: match[1]!.toLowerCase().replace(/\.$/, ''), port };
}

/** A Host header or an origin's host, the scheme's port when it names none. */
function parseAuthority(raw: string, defaultPort: number): Authority | undefined {
  const parsed = parseAllowedHost(raw);
  return parsed && { name: parsed.name, port: parsed.port ?? defaultPort };
}

interface Rules {
  /** Names allowed with the port the request came in on: the loopback names and the address the server is bound to. */
  readonly own: readonly string[];
  /** Configured: names for any port, name:port for one. */
  readonly list: readonly AllowedHost[];
}

function allowed(authority: Authority, rules: Rules, localPort: number): boolean {
  if (rules.own.includes(authority.name) && authority.port === localPort) return true;
  return rules.list.some((entry) => entry.name === authority.name && (entry.port === null || entry.port === authority.port));
}

function refuse(field: 'Host' | 'Origin', detail: string): HttpProblem {
  return new HttpProblem(hostNotAllowed, detail, { field });
}

/** The Origin as an authority (its scheme's port when it names none); undefined when it is not an http(s) origin. */
function originAuthority(origin: string): Authority | undefined {
  const match = /^(https?):\/\/([^/]+)$/i.exec(origin);
  if (!match) return undefined;
  return parseAuthority(match[2]!, match[1]!.toLowerCase() === 'https' ? 443 : 80);
}

/**
 * `allowedHosts` null: Host is not checked (the server is bound beyond loopback and nothing is configured), and
 * an Origin must be the request's own host. Otherwise Host and Origin must be allowed: the loopback names and
 * `bindHost` with the server's port, or an entry of `allowedHosts`.
 */
export function hostCheck(allowedHosts: readonly string[] | null, bindHost: string): RequestHandler {
  const bind = parseAllowedHost(bindHost.includes(':') && !bindHost.startsWith('[') ? `[${bindHost}]` : bindHost);
  const rules: Rules | null =
    allowedHosts === null
      ? null
      : {
          own: [...LOOPBACK_HOSTS, ...(bind ? [bind.name] : [])],
          list: allowedHosts.map((entry) => {
            const parsed = parseAllowedHost(entry);
            if (!parsed) throw new RangeError(`allowed host '${entry}' is not a host name, IP address or [IPv6] address with an optional :port`);
            return parsed;
          }),
        };
  return (req, _res, next) => {
    const localPort = req.socket.localPort ?? 0;
    const rawHost = req.get('host');
    const host = rawHost === undefined ? undefined : parseAuthority(rawHost, 80);
    if (rules !== null && (host === undefined || !allowed(host, rules, localPort))) {
      throw refuse(
        'Host',
        `this server does not answer for Host ${JSON.stringify((rawHost ?? '').slice(0, 100))}: use http://127.0.0.1:${localPort}, or add the name to TRAJFLOW_DASHBOARD_ALLOWED_HOSTS`,
      );
    }
    checkOrigin(req, rules, host, localPort);
    next();
  };
}

function checkOrigin(req: Request, rules: Rules | null, host: Authority | undefined, localPort: number): void {
  const origin = req.get('origin');
  if (origin === undefined) return;
  const from = originAuthority(origin);
  const ok = from !== undefined && (rules === null ? host !== undefined && from.name === host.name && from.port === host.port : allowed(from, rules, localPort));
  if (!ok) throw refuse('Origin', `requests from the page at ${JSON.stringify(origin.slice(0, 100))} are not accepted: this API answers pages of its own origin only`);
}
