/**
 * The inside of a thread host (thread-host.ts): loads one nodeset in this worker thread and
 * answers the requests its parent posts, `{ id, method, path, body }` with the body as JSON
 * text, with `{ id, status, text }`. A `{ id, hangUp: true }` aborts that request as a caller
 * hanging up does; `evicts` (alone or with a request) are evictions, handled first and never
 * answered; `{ close: true }` closes the host and ends the thread. A handler that calls
 * `process.exit` ends only this thread, which the parent reads as a host that died.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../errors.js';
import { createHost, type Host } from './host.js';
import { loadNodesetModule } from '../nodeset-registry/nodeset-module.js';
import { answerText, inProcessCall, type InProcessCall } from './in-process-hosts.js';
import type { JsonHttpAnswer } from './json-http-server.js';
import type { NodesetManifest } from '../core/types.js';
import { adoptModelKeys } from '../core/model-keys.js';

/** What the parent passes in `workerData`. */
export interface ThreadHostData {
  dir: string;
  manifest: NodesetManifest;
  tag?: string;
  injectDelayMs: number;
  /** The model keys, for a nodeset whose manifest says `modelKeys` (name → value). */
  modelKeys?: Record<string, string>;
}

/** Parent → thread. `evicts`: bodies of `POST /evict` requests, handled first and never answered. */
export type ThreadHostRequest =
  | { id: number; method: string; path: string; body: string; evicts?: string[] }
  | { evicts: string[] }
  | { id: number; hangUp: true }
  | { close: true };

/** Thread → parent: `ready` once the host serves, `failed` when it cannot start, else one answer. */
export type ThreadHostMessage = { ready: true } | { failed: string } | { id: number; status: number; text: string };

async function main(): Promise<void> {
  const port = parentPort!;
  const data = workerData as ThreadHostData;
  if (data.modelKeys) adoptModelKeys(data.modelKeys);
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
  /** The requests not answered yet, to hang up when their caller goes away. */
  const open = new Map<number, InProcessCall>();
  /**
   * Requests not started yet. Messages that arrive together are handled in one go without a
   * look at the sockets, so a burst (64 workers' first model calls) is started one request per
   * turn of the event loop: the connections and writes of the first go out while the rest start,
   * instead of all after the last (docs/decisions.md, llm throughput).
   */
  const waiting: Array<{ id: number; call: InProcessCall }> = [];
  let draining = false;
  const drain = (): void => {
    const next = waiting.shift();
    draining = next !== undefined;
    if (!next) return;
    // Whatever arrives before the loop's next turn waits for it.
    setImmediate(drain);
    const { id, call } = next;
    const answer = (a: JsonHttpAnswer): void => {
      open.delete(id);
      if (!call.gone) port.postMessage({ id, ...answerText(a) } satisfies ThreadHostMessage);
    };
    if (call.gone) open.delete(id);
    else host.handle(call.req).then(answer, (err: unknown) => answer({ status: 500, body: { error: errorMessage(err) } }));
  };
  port.on('message', (msg: ThreadHostRequest) => {
    if ('close' in msg) {
      // Ends this thread only (process.exit in a worker thread), whatever the module left running.
      void host.close().finally(() => process.exit(0));
      return;
    }
    if ('hangUp' in msg) {
      open.get(msg.id)?.hangUp();
      return;
    }
    for (const body of msg.evicts ?? []) void host.handle(inProcessCall('POST', '/evict', body).req).catch(() => {});
    if (!('id' in msg)) return;
    const call = inProcessCall(msg.method, msg.path, msg.body);
    open.set(msg.id, call);
    waiting.push({ id: msg.id, call });
    if (!draining) drain();
  });
  port.postMessage({ ready: true } satisfies ThreadHostMessage);
}

void main();
