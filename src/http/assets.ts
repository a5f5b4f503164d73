/**
 * Episode files over HTTP: `/runs/<runId>/episodes/<index>/assets/<name>`. The run id, index
 * and name are checked against their formats before they become a path.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadInputError } from '../errors.js';
import { mimeOf, type RunReader } from '../store/run-reader.js';
import { sendError } from './respond.js';

export const ASSET_ROUTE = /^\/runs\/([^/]+)\/episodes\/([^/]+)\/assets\/([^/]+)$/;

export async function serveAsset(req: IncomingMessage, res: ServerResponse, runs: RunReader, m: RegExpExecArray): Promise<void> {
  let runId: string, indexText: string, name: string;
  try {
    [runId, indexText, name] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), decodeURIComponent(m[3]!)];
  } catch {
    return sendError(res, 400, 'BAD_USER_INPUT', 'malformed asset path');
  }
  if (!/^\d{1,7}$/.test(indexText)) return sendError(res, 400, 'BAD_USER_INPUT', `invalid episode index "${indexText}"`);
  let path: string | null;
  try {
    path = await runs.assetPath(runId, Number(indexText), name);
  } catch (err) {
    if (err instanceof BadInputError) return sendError(res, 400, 'BAD_USER_INPUT', err.message);
    throw err;
  }
  if (!path) return sendError(res, 404, 'NOT_FOUND', `asset "${name}" of run ${runId} episode ${indexText} not found`);
  const info = await stat(path);
  res.writeHead(200, {
    'content-type': mimeOf(name),
    'content-length': String(info.size),
    'cache-control': 'private, max-age=3600',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(path)
    .on('error', () => res.destroy())
    .pipe(res);
}
