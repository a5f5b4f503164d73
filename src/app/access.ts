/**
 * Who may talk to the server: the Host names it answers to (against DNS rebinding), the
 * browser origins it serves, and the token when one is set. Shared by HTTP routes and the
 * WebSocket upgrade.
 */
import type { IncomingMessage } from 'node:http';
import { BadInputError } from '../errors.js';
import { hostAllowed, isLoopbackHost, normaliseAllowedHost, originAllowed } from '../http/access.js';
import type { AppOptions } from './app-options.js';

export interface Access {
  host: string;
  token: string | undefined;
  allowedOrigins: Set<string>;
  /** Why this request's Host is refused, or undefined when it is a name of this server. */
  hostRefusal(req: IncomingMessage): string | undefined;
  originAllowed(req: IncomingMessage): boolean;
}

export function accessOf(options: AppOptions): Access {
  const host = options.host ?? '127.0.0.1';
  const token = (options.token ?? process.env.EVAL_API_TOKEN) || undefined;
  if (!isLoopbackHost(host) && !token) {
    throw new BadInputError(
      `refusing to listen on ${host} without a token: anyone who can reach it could start and cancel runs. Set EVAL_API_TOKEN (clients then send "Authorization: Bearer <token>"), or listen on 127.0.0.1`,
    );
  }
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map((o) => o.replace(/\/$/, '')));
  const allowedHosts = new Set((options.allowedHosts ?? []).map(normaliseAllowedHost));
  // Beyond loopback the address it listens on is a name clients use too.
  if (allowedHosts.size > 0 && !isLoopbackHost(host) && host !== '0.0.0.0' && host !== '::') allowedHosts.add(normaliseAllowedHost(host));
  // A rebinding page cannot present the token, so beyond loopback with no list any Host is taken.
  const checkHost = isLoopbackHost(host) || allowedHosts.size > 0;
  return {
    host,
    token,
    allowedOrigins,
    hostRefusal: (req) =>
      checkHost && !hostAllowed(req, allowedHosts)
        ? `Host ${JSON.stringify(req.headers.host)} is not a name of this server: use 127.0.0.1 or localhost, or start it with --allowed-hosts ${String(req.headers.host).replace(/:\d+$/, '')}`
        : undefined,
    originAllowed: (req) => originAllowed(req, allowedOrigins),
  };
}
