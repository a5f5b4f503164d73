/**
 * Who may use the API: loopback binding, bearer tokens (compared in constant time) and the
 * browser origins allowed to call it.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive). */
export function bearerOf(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m ? m[1] : undefined;
}

export function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries: its bearer header, or for GET/HEAD an `access_token` query parameter. */
export function requestToken(req: IncomingMessage, url: URL): string | undefined {
  const bearer = bearerOf(req.headers.authorization);
  if (bearer !== undefined) return bearer;
  // <img src> and EventSource cannot send headers: GET may carry the token in the query.
  if (req.method === 'GET' || req.method === 'HEAD') return url.searchParams.get('access_token') ?? undefined;
  return undefined;
}

/**
 * True for a request without an Origin (not a browser page), or from this server's own host,
 * a loopback page, or one of `allowed`.
 */
export function originAllowed(req: IncomingMessage, allowed: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return origin === undefined;
  const trimmed = origin.replace(/\/$/, '');
  if (allowed.has(trimmed)) return true;
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return false;
  }
  return parsed.host === req.headers.host || isLoopbackHost(parsed.hostname);
}
