/**
 * startThreadHost: a nodeset's host in a worker thread of this process (thread-host-main.ts).
 * Like a child-process host it has its own module instance, its own thread (a handler that
 * computes for 10 ms runs beside the other workers' hosts, not in their way) and its own exit
 * (a handler's `process.exit` ends only its thread: the host is gone, the eval process is
 * not); unlike one it costs no process hand-offs per call: a request is one message each way,
 * carrying the same JSON text an HTTP call would. HostClient reaches it through an `inproc://`
 * URL (in-process-hosts.ts), so everything above the transport behaves as over HTTP.
 */
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { HostError } from '../errors.js';
import { THREAD_HOST_MAIN } from '../paths.js';
import { bodyText, registerInProcessHost, unregisterInProcessHost } from './in-process-hosts.js';
import { hostEnvironment } from './host-secret.js';
import { heldModelKeys } from '../core/model-keys.js';
import { stderrTail, untilReady, type HostExit, type HostProcess, type SpawnHostOptions } from './host-process.js';
import type { JsonHttpAnswer, JsonHttpRequest } from './json-http-server.js';
import type { ThreadHostData, ThreadHostMessage, ThreadHostRequest } from './thread-host-main.js';

/** How long an eviction waits for a request to ride with before it is sent alone. */
const EVICT_DELAY_MS = 50;
const EVICTED = JSON.stringify({ ok: true });

/** A request the thread cannot answer any more: HostClient reads the code as a host that went away. */
class ThreadGone extends Error {
  readonly code = 'ECONNRESET';
}

/** Starts `options.entry` (a JS-module nodeset) in a worker thread; resolves once it serves. */
export async function startThreadHost(options: SpawnHostOptions): Promise<HostProcess> {
  const { entry, tag, signal } = options;
  signal?.throwIfAborted();
  const label = tag !== undefined ? `${entry.name}#${tag}` : entry.name;
  const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  const data: ThreadHostData = {
    dir: entry.dir,
    manifest: entry.manifest,
    injectDelayMs: Number(options.env?.EVAL_HOST_INJECT_DELAY_MS ?? process.env.EVAL_HOST_INJECT_DELAY_MS) || 0,
    ...(tag !== undefined ? { tag } : {}),
    // A thread of this process: the keys it holds already, handed over in memory.
    ...(entry.manifest.modelKeys === true ? { modelKeys: heldModelKeys() } : {}),
  };
  const worker = new Worker(THREAD_HOST_MAIN, {
    workerData: data,
    env: hostEnvironment({ ...options.env, EVAL_NODESET_DIR: entry.dir, ...(tag !== undefined ? { EVAL_HOST_TAG: tag } : {}) }),
    stdout: true,
    stderr: true,
    name: `host ${label}`,
  });
  const tail = stderrTail(worker.stderr, options.onStderr);
  createInterface({ input: worker.stdout }).on('line', (line) => options.onStdout?.(line));

  let alive = true;
  let lastError: unknown;
  const pending = new Map<number, { resolve(a: JsonHttpAnswer): void; reject(e: Error): void }>();
  const exited = new Promise<HostExit>((resolve) => {
    worker.on('error', (err) => (lastError = err));
    worker.on('exit', (code) => {
      alive = false;
      const gone = new ThreadGone(`host ${label} exited (code ${code})`);
      for (const p of pending.values()) p.reject(gone);
      pending.clear();
      resolve({ code, signal: null });
    });
  });

  try {
    await untilReady<void>(label, readyTimeoutMs, signal, tail, (resolve, reject, untimed) => {
      const done = (): void => {
        untimed();
        worker.off('message', onFirst);
      };
      const onFirst = (msg: ThreadHostMessage): void => {
        done();
        if ('ready' in msg) resolve();
        else if ('failed' in msg) reject(new HostError(`host ${label} could not start: ${msg.failed}${tail()}`));
      };
      worker.on('message', onFirst);
      void exited.then((e) => {
        done();
        const why = lastError instanceof Error ? `: ${lastError.message}` : '';
        reject(new HostError(`host ${label} exited before it was ready (code ${e.code})${why}${tail()}`));
      });
    });
  } catch (err) {
    await worker.terminate();
    throw err;
  }

  worker.on('message', (msg: ThreadHostMessage) => {
    if (!('id' in msg)) return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    p.resolve({ status: msg.status, json: msg.text });
  });
  let next = 0;
  const post = (m: ThreadHostRequest): void => worker.postMessage(m);
  // An eviction needs no answer: it rides with the next request, or goes alone after EVICT_DELAY_MS,
  // sparing a message each way per episode (each the wake-up of a thread that sleeps between calls).
  let evicts: string[] = [];
  let evictTimer: NodeJS.Timeout | undefined;
  const takeEvicts = (): string[] => {
    clearTimeout(evictTimer);
    evictTimer = undefined;
    const taken = evicts;
    evicts = [];
    return taken;
  };
  const url = registerInProcessHost(label, {
    handle(req: JsonHttpRequest): Promise<JsonHttpAnswer> {
      if (!alive) return Promise.reject(new ThreadGone(`host ${label} is gone`));
      if (req.method === 'POST' && req.path === '/evict') {
        evicts.push(bodyText(req));
        evictTimer ??= setTimeout(() => alive && post({ evicts: takeEvicts() }), EVICT_DELAY_MS).unref();
        return Promise.resolve({ status: 200, json: EVICTED });
      }
      const id = ++next;
      const answer = new Promise<JsonHttpAnswer>((resolve, reject) => pending.set(id, { resolve, reject }));
      req.onHangUp(() => {
        if (pending.delete(id) && alive) post({ id, hangUp: true });
      });
      post({ id, method: req.method, path: req.path, body: bodyText(req), ...(evicts.length > 0 ? { evicts: takeEvicts() } : {}) });
      return answer;
    },
  });
  void exited.then(() => unregisterInProcessHost(url));

  let stopping: Promise<void> | undefined;
  return {
    nodeset: entry.name,
    tag: tag ?? null,
    url,
    pid: process.pid,
    get alive() {
      return alive;
    },
    exited,
    stop(graceMs = 2000) {
      stopping ??= (async () => {
        unregisterInProcessHost(url);
        if (!alive) return;
        post({ close: true });
        let timer: NodeJS.Timeout | undefined;
        const escalated = new Promise<void>((resolve) => {
          timer = setTimeout(() => void worker.terminate().finally(resolve), graceMs);
        });
        await Promise.race([exited, escalated]);
        clearTimeout(timer);
        await exited;
      })();
      return stopping;
    },
  };
}
