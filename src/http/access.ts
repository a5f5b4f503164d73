/**
 * Who may use the API: loopback binding, bearer tokens (compared in constant time), the Host
 * names a request may use (against DNS rebinding), the browser origins allowed to call it, and
 * which POSTs a foreign page cannot send unasked (against CSRF).
 */
import type { IncomingMessage } from 'node:http';
import { bearerOf } from '../core/bearer.js';
import { BadInputError } from '../errors.js';

export { bearerOf, sameToken } from '../core/bearer.js';

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
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

/**
 * A name from `--allowed-hosts`, normalised: lower case, no port; a leading dot (`.example.org`)
 * stands for the domain and every name under it.
 */
export function normaliseAllowedHost(entry: string): string {
  const h = entry.trim().toLowerCase();
  if (h === '' || /[\s/@?#]/.test(h)) throw new BadHostNameError(entry);
  if (h.startsWith('.')) return h;
  let parsed: URL;
  try {
    parsed = new URL(`http://${h}`);
  } catch {
    throw new BadHostNameError(entry);
  }
  return parsed.hostname;
}

export class BadHostNameError extends BadInputError {
  constructor(entry: string) {
    super(`allowed host ${JSON.stringify(entry)} is not a host name (e.g. "evals.lab.example" or ".lab.example" for every name under it)`);
  }
}

/**
 * True when the request's `Host` names this server as a loopback name (localhost, *.localhost,
 * 127.x.y.z, [::1]) or one of `allowed`. A page that rebinds its own DNS name to 127.0.0.1 still
 * sends its own name as Host, so this refuses it. A request without Host (HTTP/1.0) is not a browser's.
 */
export function hostAllowed(req: IncomingMessage, allowed: ReadonlySet<string>): boolean {
  const header = req.headers.host;
  if (header === undefined) return true;
  let hostname: string;
  try {
    hostname = new URL(`http://${header}`).hostname;
  } catch {
    return false;
  }
  if (isLoopbackHost(hostname) || hostname.endsWith('.localhost')) return true;
  if (allowed.has(hostname)) return true;
  for (const entry of allowed) if (entry.startsWith('.') && (hostname === entry.slice(1) || hostname.endsWith(entry))) return true;
  return false;
}

/** Header a client may send to say "not a form" when it cannot send a JSON content type (yoga's name for it). */
export const CSRF_HEADER = 'x-graphql-yoga-csrf';

/** Request bodies a browser page can POST anywhere without asking first (CORS "simple" requests) are none of these. */
const GRAPHQL_CONTENT_TYPES = new Set(['application/json', 'application/graphql+json', 'application/graphql']);

/**
 * True when a POST cannot have come from a page on another site without the browser asking the
 * server first (a CORS preflight): its content type is JSON or GraphQL, or it carries CSRF_HEADER.
 * Forms (urlencoded, multipart) and text/plain are what a foreign page can send freely.
 */
export function postIsPreflighted(req: IncomingMessage): boolean {
  if (req.headers[CSRF_HEADER] !== undefined) return true;
  return GRAPHQL_CONTENT_TYPES.has(mediaTypeOf(req));
}

/** The media type of a request's body in lower case (media types are case-insensitive), without parameters; '' when it has none. */
export function mediaTypeOf(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The bodies POST /graphql reads: yoga's parsers, each of which matches its media type exactly. */
const GRAPHQL_POST_TYPES = new Set([...GRAPHQL_CONTENT_TYPES, 'application/x-www-form-urlencoded', 'multipart/form-data']);

/**
 * Why POST /graphql refuses this request's body (the message of its 415), or undefined when it
 * takes it. A taken body's content type is rewritten with its media type in lower case and its
 * parameters trimmed (`Application/JSON ; charset=UTF-8` → `application/json; charset=UTF-8`), as yoga expects.
 */
export function graphqlPostRefusal(req: IncomingMessage): string | undefined {
  const type = mediaTypeOf(req);
  if (!postIsPreflighted(req) || !GRAPHQL_POST_TYPES.has(type))
    return `POST /graphql takes content-type application/json (or application/graphql+json, application/graphql), got ${type === '' ? 'none' : JSON.stringify(type)}; a form (urlencoded or multipart) only with a ${CSRF_HEADER} header, since a form or text/plain body is what any web page can send unasked`;
  const params = req.headers['content-type']!.split(';')
    .slice(1)
    .map((p) => p.trim());
  req.headers['content-type'] = [type, ...params.filter((p) => p !== '')].join('; ');
  return undefined;
}
