/**
 * The inside of a thread host (thread-host.ts): loads one nodeset in this worker thread and
 * answers the requests its parent posts, `{ id, method, path, body }` with the body as JSON
 * text, with `{ id, status, text }`. A `{ id, hangUp: true }` aborts that request as a caller
 * hanging up does; `{ close: true }` closes the host and ends the thread. A handler that calls
 * `process.exit` ends only this thread, which the parent reads as a host that died.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../errors.js';
import { createHost, type Host } from './host.js';
import { loadNodesetModule } from '../nodeset-registry/nodeset-module.js';
import type { JsonHttpRequest } from './json-http-server.js';
import type { NodesetManifest } from '../core/types.js';

/** What the parent passes in `workerData`. */
export interface ThreadHostData {
  dir: string;
  manifest: NodesetManifest;
  tag?: string;
  injectDelayMs: number;
}

/** Parent → thread. */
export type ThreadHostRequest =
  | { id: number; method: string; path: string; body: string | null }
  | { id: number; hangUp: true }
  | { close: true };

/** Thread → parent: `ready` once the host serves, `failed` when it cannot start, else one answer. */
export type ThreadHostMessage = { ready: true } | { failed: string } | { id: number; status: number; text: string };

const NO_BYTES = Buffer.alloc(0);

async function main(): Promise<void> {
  const port = parentPort!;
  const data = workerData as ThreadHostData;
  let host: Host;
  try {
    const mod = await loadNodesetModule(data.dir, data.manifest);
    await mod.init?.({ dir: data.dir, manifest: data.manifest });
    host = createHost({
      manifest: data.manifest,
      dir: data.dir,
      module: mod,
      injectDelayMs: data.injectDelayMs,
      ...(data.tag !== undefined ? { tag: data.tag } : {}),
    });
  } catch (err) {
    port.postMessage({ failed: errorMessage(err) } satisfies ThreadHostMessage);
    return;
  }
  /** Hang-up callbacks of the requests not answered yet. */
  const open = new Map<number, { controller?: AbortController; hangUps: Array<(reason: Error) => void>; gone?: Error }>();
  port.on('message', (msg: ThreadHostRequest) => {
    if ('close' in msg) {
      // Ends this thread only (process.exit in a worker thread), whatever the module left running.
      void host.close().finally(() => process.exit(0));
      return;
    }
    if ('hangUp' in msg) {
      const req = open.get(msg.id);
      if (!req || req.gone) return;
      req.gone = new Error('the caller went away');
      req.controller?.abort(req.gone);
      for (const cb of req.hangUps.splice(0)) cb(req.gone);
      return;
    }
    const state: { controller?: AbortController; hangUps: Array<(reason: Error) => void>; gone?: Error } = { hangUps: [] };
    open.set(msg.id, state);
    const req: JsonHttpRequest = {
      method: msg.method,
      path: msg.path,
      body: msg.body === null ? NO_BYTES : Buffer.from(msg.body, 'utf8'),
      get signal(): AbortSignal {
        state.controller ??= new AbortController();
        if (state.gone && !state.controller.signal.aborted) state.controller.abort(state.gone);
        return state.controller.signal;
      },
      onHangUp(cb) {
        if (state.gone) cb(state.gone);
        else state.hangUps.push(cb);
      },
    };
    const answer = (status: number, text: string): void => {
      open.delete(msg.id);
      if (!state.gone) port.postMessage({ id: msg.id, status, text } satisfies ThreadHostMessage);
    };
    host.handle(req).then(
      (a) => {
        let text: string;
        try {
          text = a.json ?? JSON.stringify(a.body ?? null);
        } catch (err) {
          answer(500, JSON.stringify({ error: `the answer could not be serialised: ${errorMessage(err)}` }));
          return;
        }
        answer(a.status, text);
      },
      (err: unknown) => answer(500, JSON.stringify({ error: errorMessage(err) })),
    );
  });
  port.postMessage({ ready: true } satisfies ThreadHostMessage);
}

void main();
