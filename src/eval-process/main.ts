/**
 * Eval process entry: `node dist/eval-process/main.js --run-dir DIR [--backend-url URL] [--await-go]`.
 * The spec is read from DIR/spec.json. With `--await-go` the process starts as a spare: it loads
 * everything, then waits for `{ type: 'go' }` on its IPC channel before it reads the spec (a
 * scale-out worker keeps one ready per slot, so a shard does not wait for Node to start;
 * `evalctl run` starts one while it checks the run, and its go names the run dir, which
 * `--run-dir` may then leave out).
 * SIGTERM or SIGINT cancels the run: dispatch stops, in-flight episodes end CANCELLED, the
 * summary is written (CANCELLED), the hosts stop, and the process exits 0. The parent's death stops it the same way, but the run is ABORTED
 * (exit 1). Its hosts die with it even on SIGKILL.
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CodedError, errorMessage } from '../errors.js';
import {
  isSpareGo,
  type BackendToEvalMessage,
  type EvalToBackendMessage,
  type SpareGoMessage,
  type SpareWaitingMessage,
} from './messages.js';
import { startHeartbeat } from './heartbeat.js';
import { runBatch } from './run-batch.js';
import { loadDistributions } from '../stats/distributions.js';
import { isStorageCode, STORAGE_EXIT_CODES, storageCodeOf } from '../store/storage-fault.js';
import { lineBatch } from './line-batch.js';
import { watchParent } from './parent-watch.js';
import { adoptHostSecretsFromEnv, rememberHostSecret } from '../host/host-secret.js';
import { adoptModelKeys, readModelKeysFromFd, takeModelKeys } from '../core/model-keys.js';
import { shutdownTracing, startTracing } from '../tracing/tracing.js';
import { TRACEPARENT_ENV } from '../tracing/traceparent.js';

/** How long a cancelled run may take to wind down before the process exits regardless. */
const CANCEL_GRACE_MS = 8000;

const stamp = () => `+${Math.round(performance.now())}ms`;
const episodeLines = lineBatch((text) => process.stdout.write(text), 500);
const out = (line: string) => {
  episodeLines.flush();
  process.stdout.write(`[eval ${stamp()}] ${line}\n`);
};
const err = (line: string) => process.stderr.write(`[eval ${stamp()}] ${line}\n`);

// A reader that went away (a closed pipe) must not take the run down with it.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

async function main(): Promise<number> {
  adoptHostSecretsFromEnv();
  // Out of the environment before any host or thread is started: they must not inherit a key.
  takeModelKeys();
  readModelKeysFromFd();
  const { values } = parseArgs({
    options: { 'run-dir': { type: 'string' }, 'backend-url': { type: 'string' }, 'await-go': { type: 'boolean' } },
    strict: true,
  });
  const runDirArg = values['run-dir'];
  if (!runDirArg && !values['await-go']) {
    err('usage: main.js --run-dir DIR [--backend-url URL] [--await-go]');
    return 2;
  }
  if (values['await-go'] && !process.channel) {
    err('--await-go needs an IPC channel to the parent (the go message comes on it)');
    return 2;
  }
  let runDir = runDirArg ? resolve(runDirArg) : undefined;
  runDirOfThisProcess = runDir;
  // From the main thread: an env call that holds it for good silences it too (docs/scheduler.md, Hung runs).
  startHeartbeat();
  const controller = new AbortController();
  const stop = (reason: Error) => {
    if (controller.signal.aborted) return;
    out(`stopping: ${reason.message}`);
    controller.abort(reason);
    setTimeout(() => {
      err(`run did not wind down within ${CANCEL_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, CANCEL_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => stop(new Error('cancelled (SIGTERM)')));
  process.on('SIGINT', () => stop(new Error('cancelled (SIGINT)')));
  // Nobody asked for this stop: the run ends ABORTED, not CANCELLED.
  watchParent({ onParentGone: (reason) => stop(new CodedError('ABORTED', `stopped because ${reason}`)) });

  // A restarted shared host comes back on a new URL; the backend says so on the IPC channel.
  const moved = new Map<string, string>();
  let move: ((nodeset: string, url: string) => void) | undefined;
  process.on('message', (message: unknown) => {
    if (!isSharedHostMoved(message)) return;
    if (typeof message.secret === 'string') rememberHostSecret(message.url, message.secret);
    moved.set(message.nodeset, message.url);
    move?.(message.nodeset, message.url);
  });

  out(
    `${values['await-go'] ? 'spare for ' : ''}run dir ${runDir ?? '(named by go)'}${values['backend-url'] ? `, backend ${values['backend-url']}` : ''}, pid ${process.pid}`,
  );
  // The run span the parent made, if it traces; the hosts this process starts must not inherit it.
  const traceparent = process.env[TRACEPARENT_ENV];
  delete process.env[TRACEPARENT_ENV];
  const tracing = await startTracing({ role: 'eval', log: err });
  if (tracing) out(`tracing to ${tracing.url}`);
  if (values['await-go']) {
    // A spare idles until go: load now what every run loads first thing after it.
    loadDistributions();
    const go = await goOrStop(controller.signal);
    // Stopped while still a spare: no run was started, so there is nothing to write.
    if (!go) return 0;
    // Variables the parent set after it started this spare (hosts started from here on inherit them).
    const set = Object.entries(go.env ?? {}).filter(([, v]) => typeof v === 'string');
    for (const [k, v] of set) process.env[k] = v;
    takeModelKeys();
    adoptModelKeys(go.modelKeys);
    // Names only: a value may be a secret.
    if (set.length > 0) out(`variables set by go: ${set.map(([k]) => k).join(', ')}`);
    if (typeof go.runDir === 'string') {
      runDir = resolve(go.runDir);
      runDirOfThisProcess = runDir;
      out(`run dir ${runDir}`);
    }
  }
  if (!runDir) {
    err('the go message named no run dir, and --run-dir was not given');
    return 2;
  }
  let first = true;
  const summary = await runBatch({
    runDir,
    ...(traceparent ? { traceparent } : {}),
    signal: controller.signal,
    log: out,
    bindSharedHostMover: (fn) => {
      move = fn;
      for (const [nodeset, url] of moved) fn(nodeset, url);
    },
    onHostStarted: (h) => out(`host ${h.nodeset}${h.tag !== null ? `#${h.tag}` : ''} up at ${h.url} (pid ${h.pid})`),
    onHostsReady: (hosts) =>
      out(`hosts: ${hosts.map((h) => `${h.nodeset}${h.tag !== null ? `#${h.tag}` : ''}=${h.url} (pid ${h.pid})`).join(', ')}`),
    onEpisodeStart: ({ index, workerId }) => {
      if (first) {
        out(`first episode started (episode ${index}, worker ${workerId})`);
        if (reportEpisodes) process.send?.({ type: 'running' } satisfies EvalToBackendMessage);
      }
      first = false;
    },
    // A scale-out worker ships each finished episode to the head as soon as its folder is written.
    ...(reportEpisodes
      ? {
          onEpisodeWritten: (r: { index: number }) =>
            process.send?.({ type: 'episodeDone', index: r.index } satisfies EvalToBackendMessage),
        }
      : {}),
    onEpisode: (r, s) =>
      episodeLines.push(`[eval ${stamp()}] episode ${r.index} ${r.status} in ${r.durationMs} ms (${s.episodesDone}/${s.episodeCount})\n`),
  });
  out(`run ${summary.runId} ${summary.status}${summary.error ? `: ${summary.error.message}` : ''}`);
  if (summary.status === 'COMPLETED' || summary.status === 'CANCELLED') return 0;
  const code = summary.error?.code;
  return isStorageCode(code) ? STORAGE_EXIT_CODES[code] : 1;
}

let runDirOfThisProcess: string | undefined;
/** Set by a scale-out worker: tell the parent over IPC when the first episode starts and when each episode's folder is complete. */
const reportEpisodes = process.env.EVAL_EPISODE_IPC === '1';

/** Resolves with the parent's `{ type: 'go' }`, or false when the process is stopped first. */
function goOrStop(signal: AbortSignal): Promise<SpareGoMessage | false> {
  return new Promise((resolve) => {
    const onMessage = (m: unknown) => {
      if (isSpareGo(m)) done(m);
    };
    const onAbort = () => done(false);
    const done = (go: SpareGoMessage | false) => {
      process.channel?.unref();
      process.off('message', onMessage);
      signal.removeEventListener('abort', onAbort);
      resolve(go);
    };
    if (signal.aborted) return resolve(false);
    // The channel is unref'd (it must never keep a run alive); while waiting it is all there is.
    process.channel?.ref();
    process.on('message', onMessage);
    signal.addEventListener('abort', onAbort, { once: true });
    // A message sent before this listener existed would be lost: the parent sends go only after this.
    process.send?.({ type: 'waiting' } satisfies SpareWaitingMessage);
  });
}

function isSharedHostMoved(m: unknown): m is BackendToEvalMessage {
  const x = m as Partial<BackendToEvalMessage> | null;
  return typeof x === 'object' && x !== null && x.type === 'sharedHostMoved' && typeof x.nodeset === 'string' && typeof x.url === 'string';
}

// Spans still buffered are exported before the process exits, on every path that ends main (a cancel too).
const mainThenFlush = () => main().finally(shutdownTracing);

mainThenFlush().then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (e: unknown) => {
    episodeLines.flush();
    err(`eval process failed: ${errorMessage(e)}`);
    // A storage fault says which in the exit code: the disk may refuse the log line and the summary.
    const storage = storageCodeOf(e, runDirOfThisProcess);
    process.exit(storage ? STORAGE_EXIT_CODES[storage] : 1);
  },
);
