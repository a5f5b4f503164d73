/**
 * spawnHost: starts one nodeset's host as a child process and waits for its ready line.
 * The child's stdin is a pipe held open for its whole life: when this process dies, even by
 * SIGKILL, the child reads EOF and exits (docs/host-protocol.md, "Parent death").
 * The child gets its own process group, so a signal meant for its parent's group (a terminal's
 * Ctrl-C, a cancel's SIGTERM) reaches the parent alone: the parent records the cancel first,
 * then stops its hosts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { ResultPromise } from 'execa';
import { HostError } from '../errors.js';
import { HOST_MAIN } from '../paths.js';
import { HOST_READY_PREFIX, type NodesetManifest } from '../core/types.js';
import { HOST_SECRET_ENV, forgetHostSecret, hostEnvironment, rememberHostSecret } from './host-secret.js';
import { heldModelKeys, MODEL_KEYS_FD_ENV } from '../core/model-keys.js';

export interface HostEntry {
  name: string;
  dir: string;
  manifest: NodesetManifest;
}

export interface SpawnHostOptions {
  entry: HostEntry;
  /** Distinguishes replicated hosts of one nodeset (e.g. the worker index). */
  tag?: string;
  /** Extra environment for the host (added to this process's environment, less EVAL_API_TOKEN and model keys). */
  env?: Record<string, string>;
  /** Aborting while the host starts kills it and rejects. */
  signal?: AbortSignal;
  /** How long to wait for the ready line. @default 20000 */
  readyTimeoutMs?: number;
  /** Each line the host writes on stderr. */
  onStderr?(line: string): void;
  /** Each line the host writes on stdout after its ready line. */
  onStdout?(line: string): void;
}

export interface HostExit {
  code: number | null;
  signal: string | null;
}

export interface HostProcess {
  nodeset: string;
  tag: string | null;
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** False once the process has exited. */
  readonly alive: boolean;
  exited: Promise<HostExit>;
  /** SIGTERM, then SIGKILL when still running after `graceMs`. Idempotent. @default graceMs 2000 */
  stop(graceMs?: number): Promise<void>;
}

const STDERR_TAIL_LINES = 30;

/** Passes each line of a host's stderr to `onLine` and keeps the last ones; the result says them, for an error about the host. */
export function stderrTail(stream: Readable, onLine?: (line: string) => void): () => string {
  const lines: string[] = [];
  createInterface({ input: stream }).on('line', (line) => {
    lines.push(line);
    if (lines.length > STDERR_TAIL_LINES) lines.shift();
    onLine?.(line);
  });
  return () => (lines.length > 0 ? `; stderr:\n${lines.join('\n')}` : ' (no stderr)');
}

/**
 * What a host start waits on: `start` gets `resolve`, `reject` and `done` (call it before either,
 * to drop the timer and the abort listener). Rejects after `timeoutMs` with the host's last
 * stderr lines (`tail`), or when `signal` aborts.
 */
export function untilReady<T>(
  label: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  tail: () => string,
  start: (resolve: (v: T) => void, reject: (err: unknown) => void, done: () => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new HostError(`host ${label} did not report ready within ${timeoutMs} ms${tail()}`)), timeoutMs);
    const onAbort = (): void => reject(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    start(resolve, reject, () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

/** The argv that starts a nodeset's host. */
export function hostCommand(entry: HostEntry, tag?: string): { file: string; args: string[]; cwd?: string } {
  const { manifest, dir } = entry;
  if (manifest.module) {
    return { file: process.execPath, args: [HOST_MAIN, '--nodeset-dir', dir, ...(tag !== undefined ? ['--tag', tag] : [])] };
  }
  const argv = manifest.command;
  if (!argv || argv.length === 0) throw new HostError(`nodeset "${manifest.name}" has neither "module" nor "command"`);
  // Arguments naming files of the nodeset are resolved against its folder; `node` is this Node.
  const resolved = argv.map((a) => (!isAbsolute(a) && existsSync(join(dir, a)) ? join(dir, a) : a));
  const [file, ...args] = resolved as [string, ...string[]];
  return { file: file === 'node' ? process.execPath : file, args, cwd: dir };
}

export async function spawnHost(options: SpawnHostOptions): Promise<HostProcess> {
  const { entry, tag, signal } = options;
  const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  if (!Number.isFinite(readyTimeoutMs) || readyTimeoutMs <= 0) {
    throw new HostError(`spawnHost: readyTimeoutMs must be a positive number, got ${String(readyTimeoutMs)}`);
  }
  // Loaded on the first spawn (~100 ms of start-up an eval process whose hosts all run in threads never needs), before the abort check, so nothing waits between the check and the spawn.
  const { execa } = await import('execa');
  signal?.throwIfAborted();
  const label = tag !== undefined ? `${entry.name}#${tag}` : entry.name;
  const { file, args, cwd } = hostCommand(entry, tag);
  // The host's own secret: its callers in this process find it by URL (host-secret.ts).
  const secret = randomBytes(32).toString('base64url');
  // A host that calls a model reads its keys from a pipe of its own (descriptor 3), never from its environment.
  const keys = entry.manifest.modelKeys === true ? Buffer.from(JSON.stringify(heldModelKeys())) : undefined;

  const child: ResultPromise = execa(file, args, {
    cwd: cwd ?? entry.dir,
    extendEnv: false,
    env: hostEnvironment({
      ...options.env,
      EVAL_NODESET_DIR: entry.dir,
      EVAL_PARENT_PID: String(process.pid),
      ...(tag !== undefined ? { EVAL_HOST_TAG: tag } : {}),
      [HOST_SECRET_ENV]: secret,
      ...(keys ? { [MODEL_KEYS_FD_ENV]: '3' } : {}),
    }),
    stdio: keys ? ['pipe', 'pipe', 'pipe', keys] : ['pipe', 'pipe', 'pipe'],
    detached: true,
    buffer: false,
    reject: false,
    forceKillAfterDelay: false,
  });

  let alive = true;
  const exited: Promise<HostExit> = child.then(
    (r) => ({ code: r.exitCode ?? null, signal: r.signal ?? null }),
    () => ({ code: null, signal: null }),
  );
  void exited.then(() => {
    alive = false;
  });
  if (child.pid === undefined) {
    const result = await child;
    throw new HostError(`host ${label}: could not start ${file}: ${result.originalMessage || result.shortMessage || 'unknown reason'}`);
  }
  const pid = child.pid;

  const tail = stderrTail(child.stderr!, options.onStderr);

  let port: number;
  try {
    port = await untilReady<number>(label, readyTimeoutMs, signal, tail, (resolve, reject, done) => {
      let ready = false;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (ready) return options.onStdout?.(line);
        if (!line.startsWith(HOST_READY_PREFIX)) return options.onStdout?.(line);
        let info: { port?: unknown };
        try {
          info = JSON.parse(line.slice(HOST_READY_PREFIX.length)) as { port?: unknown };
        } catch {
          done();
          return reject(new HostError(`host ${label}: unreadable ready line ${JSON.stringify(line)}`));
        }
        if (typeof info.port !== 'number' || !Number.isInteger(info.port) || info.port <= 0) {
          done();
          return reject(new HostError(`host ${label}: ready line without a valid port: ${JSON.stringify(line)}`));
        }
        ready = true;
        done();
        resolve(info.port);
      });
      void exited.then((e) => {
        done();
        // stderr may still be draining; give it a moment so the error carries the host's last words.
        setTimeout(
          () => reject(new HostError(`host ${label} exited before it was ready (code ${e.code}, signal ${e.signal})${tail()}`)),
          20,
        );
      });
    });
  } catch (err) {
    if (alive) child.kill('SIGKILL');
    await exited;
    throw err;
  }

  const url = `http://127.0.0.1:${port}`;
  rememberHostSecret(url, secret);
  void exited.then(() => forgetHostSecret(url, secret));
  let stopping: Promise<void> | undefined;
  return {
    nodeset: entry.name,
    tag: tag ?? null,
    url,
    pid,
    get alive() {
      return alive;
    },
    exited,
    stop(graceMs = 2000) {
      stopping ??= (async () => {
        if (!alive) return;
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const escalated = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            if (alive) child.kill('SIGKILL');
            resolve();
          }, graceMs);
        });
        await Promise.race([exited, escalated]);
        clearTimeout(timer);
        await exited;
      })();
      return stopping;
    },
  };
}
