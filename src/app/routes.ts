/**
 * HTTP routing with the access checks in front: /healthz, /graphql (yoga, after the Host,
 * Origin, token and simple-request checks), episode assets, run exports, and the dashboard's files.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { graphqlPostRefusal, requestToken, sameToken } from '../http/access.js';
import { ASSET_ROUTE, serveAsset } from '../http/assets.js';
import { sendError, sendJson } from '../http/respond.js';
import { EXPORT_ROUTE, serveExport } from '../http/run-export.js';
import { serveStatic } from '../http/static-files.js';
import { isScaleoutPath, serveScaleout } from '../http/scaleout-routes.js';
import type { ScaleoutHead } from '../scaleout/scaleout-head.js';
import type { RunReader } from '../store/run-reader.js';
import type { Access } from './access.js';
import type { ApiYoga } from './yoga.js';

/** The query parameters of a GraphQL GET that hold JSON. */
const JSON_PARAMS = ['variables', 'extensions'] as const;

function isJsonOrAbsent(value: string | null): boolean {
  if (!value) return true;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

export function createRequestHandler(opts: {
  access: Access;
  yoga: ApiYoga;
  runs: RunReader;
  webDir: string;
  scaleout?: ScaleoutHead | undefined;
}) {
  const { access, yoga, runs, webDir } = opts;
  const { token } = access;
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    // An absolute-form target (`POST http://host/graphql`) is for proxies; yoga could not build its URL either.
    if (!target.startsWith('/'))
      return sendError(res, 400, 'BAD_USER_INPUT', 'the request target must be a path such as /graphql, not a full URL or "*"');
    // Read as yoga reads it: a target of `//host/graphql` is that path, not a URL naming another host.
    const url = new URL(`http://localhost${target}`);
    const { pathname } = url;
    const badHost = access.hostRefusal(req);
    if (badHost) return sendError(res, 403, 'UNAUTHENTICATED', badHost);
    // Beyond loopback with a token any Host is taken, and yoga builds its URL from it.
    const host = req.headers.host;
    if (host !== undefined && (/[\s/?#@\\]/.test(host) || !URL.canParse(`http://${host}/`)))
      return sendError(res, 400, 'BAD_USER_INPUT', `Host ${JSON.stringify(host)} is not a host name`);
    if (pathname === '/healthz') return sendJson(res, 200, { ok: true });
    if (isScaleoutPath(pathname)) {
      // Workers are programs, not pages: the token (when set), no browser origin.
      if (req.headers.origin !== undefined) return sendError(res, 403, 'UNAUTHENTICATED', 'scale-out routes take no browser requests');
      if (token && !sameToken(requestToken(req, url), token)) {
        res.setHeader('www-authenticate', 'Bearer');
        return sendError(res, 401, 'UNAUTHENTICATED', 'missing or wrong token: send "Authorization: Bearer <token>"');
      }
      return serveScaleout(req, res, pathname, opts.scaleout);
    }
    const isApi = pathname === '/graphql' || pathname.startsWith('/graphql/');
    const assetMatch = ASSET_ROUTE.exec(pathname);
    const exportMatch = EXPORT_ROUTE.exec(pathname);
    if (isApi || assetMatch || exportMatch) {
      if (!access.originAllowed(req)) return sendError(res, 403, 'UNAUTHENTICATED', `origin ${req.headers.origin} is not allowed`);
      if ((assetMatch || exportMatch) && req.method !== 'GET' && req.method !== 'HEAD')
        return sendError(res, 405, 'BAD_USER_INPUT', `${req.method} is not allowed on ${assetMatch ? 'assets' : 'exports'}`);
      // A CORS preflight never carries credentials; yoga answers it for allowed origins only.
      if (token && req.method !== 'OPTIONS' && !sameToken(requestToken(req, url), token)) {
        res.setHeader('www-authenticate', 'Bearer');
        return sendError(res, 401, 'UNAUTHENTICATED', 'missing or wrong token: send "Authorization: Bearer <token>"');
      }
      if (assetMatch) return serveAsset(req, res, runs, assetMatch);
      if (exportMatch) return serveExport(req, res, runs, exportMatch);
      const refusal = req.method === 'POST' ? graphqlPostRefusal(req) : undefined;
      if (refusal !== undefined) return sendError(res, 415, 'BAD_USER_INPUT', refusal);
      // yoga parses these with a bare JSON.parse, whose SyntaxError it would answer as an internal error.
      const notJson = req.method === 'GET' ? JSON_PARAMS.find((p) => !isJsonOrAbsent(url.searchParams.get(p))) : undefined;
      if (notJson !== undefined) return sendError(res, 400, 'BAD_USER_INPUT', `the ${notJson} query parameter is not valid JSON`);
      return void (await yoga.requestListener(req, res));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'BAD_USER_INPUT', `${req.method} is not allowed here`);
    return serveStatic(req, res, webDir, pathname);
  };
}
