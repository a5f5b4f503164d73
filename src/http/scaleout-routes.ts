/**
 * The head's scale-out routes (POST, JSON, behind the server's token like /graphql):
 * /scaleout/claim, /scaleout/commit, /scaleout/shard-end, /scaleout/heartbeat. Answered 404
 * when the server runs without --redis.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CodedError, errorMessage, isClientFault } from '../errors.js';
import type { ScaleoutHead } from '../scaleout/scaleout-head.js';
import { SCALEOUT_ROUTES } from '../scaleout/protocol.js';
import { sendError, sendJson } from './respond.js';

/** Episode folders travel base64 in one body: this bounds one commit. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;

export const isScaleoutPath = (pathname: string): boolean => pathname.startsWith('/scaleout/');

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new CodedError('BAD_USER_INPUT', `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export async function serveScaleout(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  head: ScaleoutHead | undefined,
): Promise<void> {
  if (!head) return sendError(res, 404, 'NOT_FOUND', 'this server runs without --redis: it has no scale-out workers');
  if (req.method !== 'POST') return sendError(res, 405, 'BAD_USER_INPUT', `${req.method} is not allowed on ${pathname}`);
  try {
    const body = (await readBody(req)) as never;
    switch (pathname) {
      case SCALEOUT_ROUTES.claim:
        return sendJson(res, 200, head.claim(body));
      case SCALEOUT_ROUTES.commit:
        return sendJson(res, 200, await head.commit(body));
      case SCALEOUT_ROUTES.shardEnd:
        await head.shardEnd(body);
        return sendJson(res, 200, { ok: true });
      case SCALEOUT_ROUTES.heartbeat:
        head.heartbeat(body);
        return sendJson(res, 200, { ok: true });
      default:
        return sendError(res, 404, 'NOT_FOUND', `no route ${pathname}`);
    }
  } catch (err) {
    const code = err instanceof CodedError ? err.code : err instanceof SyntaxError ? 'BAD_USER_INPUT' : 'INTERNAL_SERVER_ERROR';
    const status = code === 'CONFLICT' ? 409 : code === 'NOT_FOUND' ? 404 : isClientFault(code) ? 400 : 500;
    return sendError(res, status, code, errorMessage(err));
  }
}
