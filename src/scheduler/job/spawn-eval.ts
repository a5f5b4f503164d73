/**
 * Starts a run's eval process: `node <dist>/eval-process/main.js --run-dir DIR --backend-url URL`,
 * in its own process group, stdin ignored, stdout/stderr appended to the run's logs, with an IPC
 * channel whose disconnect tells the child that the backend is gone.
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { writeJsonAtomic } from '../../store/atomic.js';
import type { ProcessRecord } from '../../store/catalog.js';
import { FILES } from '../../store/run-dir.js';
import { heldModelKeys, keyFingerprints, MODEL_KEYS_FD_ENV, withoutModelKeys } from '../../core/model-keys.js';

export interface EvalExit {
  exitCode: number | null;
  signal: string | null;
  /** When this process saw the exit (ISO time); absent when only polling noticed it. */
  exitedAt?: string;
}

export interface EvalChild {
  pid: number;
  startedAt: string;
  /** Resolves when the process has exited (never rejects). */
  exited: Promise<EvalExit>;
  /** Sends a message on the IPC channel; false when the channel is gone. */
  send(message: unknown): boolean;
  /** Stops holding this process's event loop open for the child (it still ends when this process does). */
  detach(): void;
}

export interface SpawnEvalOptions {
  evalProcessMain: string;
  runDir: string;
  backendUrl: string;
  /** Becomes ACTIVE_WORKSPACE_DIR in the child; else the backend's own value passes through. */
  workspaceDir?: string;
  env?: Record<string, string>;
  /** Start as a spare: loaded and waiting for `{ type: 'go' }` on the IPC channel before it reads the spec (see EvalChild.send). */
  awaitGo?: boolean;
  /** Messages the child sends on its IPC channel (a scale-out worker's episode notices). */
  onMessage?: (message: unknown) => void;
}

export async function spawnEvalProcess(opts: SpawnEvalOptions): Promise<EvalChild> {
  const args = [opts.evalProcessMain, '--run-dir', opts.runDir, '--backend-url', opts.backendUrl, ...(opts.awaitGo ? ['--await-go'] : [])];
  // The child writes straight into the log files, so its output survives without a pipe through the backend.
  const out = openSync(join(opts.runDir, FILES.stdout), 'a');
  const err = openSync(join(opts.runDir, FILES.stderr), 'a');
  // Never in the environment: the keys go on a pipe of their own (descriptor 3), read once at start. The run
  // borrows the server's model hosts; it holds the keys only for its nodesets' preflight checks (an endpoint that
  // refuses the key fails the run before its first episode). A scale-out worker's run gets them with go.
  keyFingerprints();
  const keys = heldModelKeys();
  const env: Record<string, string> = withoutModelKeys({ ...process.env, ...opts.env });
  if (Object.keys(keys).length > 0) env[MODEL_KEYS_FD_ENV] = '3';
  const workspace = opts.workspaceDir ?? process.env.ACTIVE_WORKSPACE_DIR;
  if (workspace) env.ACTIVE_WORKSPACE_DIR = workspace;
  // execa's types take only literal descriptor numbers; at run time any open descriptor is passed through.
  type Fd = 3;
  const spawn = () =>
    execa(process.execPath, args, {
      detached: true,
      stdio:
        Object.keys(keys).length > 0
          ? ['ignore', out as Fd, err as Fd, Buffer.from(JSON.stringify(keys))]
          : ['ignore', out as Fd, err as Fd],
      ipc: true,
      buffer: false,
      cleanup: false,
      reject: false,
      forceKillAfterDelay: false,
      extendEnv: false,
      env,
      cwd: opts.runDir,
    });
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn();
  } finally {
    // The child holds its own copies of the descriptors.
    closeSync(out);
    closeSync(err);
  }
  const exited = new Promise<EvalExit>((resolve) => {
    // 'exit' fires as soon as the process is gone, before execa settles its result.
    child.once('exit', (code, signal) => resolve({ exitCode: code, signal, exitedAt: new Date().toISOString() }));
    child.then(
      (r) => resolve({ exitCode: r.exitCode ?? null, signal: r.signal ?? null }),
      () => resolve({ exitCode: null, signal: null }),
    );
  });
  if (opts.onMessage) child.on('message', opts.onMessage);
  if (child.pid === undefined) {
    const e = await exited;
    throw new Error(`could not start the eval process (${process.execPath} ${args.join(' ')}): exit ${e.exitCode ?? e.signal}`);
  }
  const startedAt = new Date().toISOString();
  const record: ProcessRecord = { pid: child.pid, startedAt, command: [process.execPath, ...args] };
  await writeJsonAtomic(join(opts.runDir, FILES.process), record);
  return {
    pid: child.pid,
    startedAt,
    exited,
    send(message) {
      if (!child.connected) return false;
      child.sendMessage(message as never).catch(() => {});
      return true;
    },
    detach() {
      child.unref();
      child.channel?.unref();
    },
  };
}

/** SIGTERM (or another signal) to a whole process group; false when the group is already empty. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
