/**
 * A run's downloads over HTTP: `/runs/<runId>/export.csv`, `.jsonl`, `.json` (the summary) and
 * `.tar.gz` (the whole run directory), streamed from disk as the client reads them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BadInputError } from '../errors.js';
import { EXPORT_TYPES, exportStream, type ExportFormat } from '../export/run-export.js';
import type { RunReader } from '../store/run-reader.js';
import { SummaryInvalidError } from '../store/summary-schema.js';
import { sendError } from './respond.js';

export const EXPORT_ROUTE = /^\/runs\/([^/]+)\/export\.(csv|jsonl|json|tar\.gz)$/;

const FORMAT_OF_EXT: Record<string, ExportFormat> = { csv: 'csv', jsonl: 'jsonl', json: 'json', 'tar.gz': 'tar' };

export async function serveExport(req: IncomingMessage, res: ServerResponse, runs: RunReader, m: RegExpExecArray): Promise<void> {
  let runId: string;
  try {
    runId = decodeURIComponent(m[1]!);
  } catch {
    return sendError(res, 400, 'BAD_USER_INPUT', 'malformed run id');
  }
  const format = FORMAT_OF_EXT[m[2]!]!;
  let dir: string;
  try {
    dir = runs.runDir(runId);
  } catch (err) {
    if (err instanceof BadInputError) return sendError(res, 400, 'BAD_USER_INPUT', err.message);
    throw err;
  }
  if (!(await runs.exists(runId))) return sendError(res, 404, 'NOT_FOUND', `run ${runId} not found`);
  const abort = new AbortController();
  res.once('close', () => abort.abort());
  let body: Readable;
  try {
    body = await exportStream(dir, format, abort.signal);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return sendError(res, 404, 'NOT_FOUND', `run ${runId} has no summary yet`);
    if (err instanceof SummaryInvalidError)
      return sendError(res, 409, 'CONFLICT', `run ${runId}'s summary.json is not readable now: ${err.message}`);
    throw err;
  }
  const { ext, contentType } = EXPORT_TYPES[format];
  res.writeHead(200, {
    'content-type': contentType,
    'content-disposition': `attachment; filename="${runId}.${ext}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    body.destroy();
    return void res.end();
  }
  // A client that goes away ends the stream (abort); nothing to answer then.
  await pipeline(body, res).catch(() => res.destroy());
}
