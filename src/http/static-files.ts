/**
 * The dashboard's build: files from its folder, `index.html` for client routes, and a plain
 * page saying how to build it when it is missing. Nothing outside the folder is served.
 */
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { sendError } from './respond.js';

const STATIC_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

const NOT_BUILT_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Batch eval</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3rem">
<h1>Batch eval server</h1>
<p>The dashboard is not built: run <code>npm run build</code> (or <code>npm run build:web</code>) and reload.</p>
<p>The GraphQL API is at <a href="/graphql">/graphql</a> (GraphiQL in a browser).</p>
</body></html>
`;

export async function serveStatic(req: IncomingMessage, res: ServerResponse, webDir: string, pathname: string): Promise<void> {
  const index = join(webDir, 'index.html');
  const send = async (file: string, status = 200) => {
    const body = await readFile(file);
    const type = STATIC_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
    // Hashed build files never change; index.html must be re-read to pick up a new build.
    const cache = file === index ? 'no-cache' : 'public, max-age=31536000, immutable';
    res.writeHead(status, {
      'content-type': type,
      'content-length': String(body.length),
      'cache-control': cache,
      'x-content-type-options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return sendError(res, 400, 'BAD_USER_INPUT', 'malformed path');
  }
  const file = resolve(webDir, '.' + decoded);
  if (file !== webDir && !file.startsWith(webDir + sep)) return sendError(res, 404, 'NOT_FOUND', 'not found');
  try {
    if ((await stat(file)).isFile()) return await send(file);
  } catch {
    // not a file: a client route or missing
  }
  if (extname(decoded) !== '' && decoded !== '/') return sendError(res, 404, 'NOT_FOUND', `${decoded} not found`);
  try {
    await stat(index);
  } catch {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
    return void res.end(req.method === 'HEAD' ? undefined : NOT_BUILT_PAGE);
  }
  return send(index);
}
