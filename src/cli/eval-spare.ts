/**
 * The eval process of `evalctl run`, started as a spare (`--await-go`) as soon as the command is
 * known: Node's start and the eval process's module loading (~160–200 ms) then overlap the CLI's
 * own loading and checks instead of following them. `go(dir)` hands it the run once the run dir
 * is written; a command that starts no run (bad input, `--remote`, `--help`) discards it, and a
 * discarded or orphaned spare exits without writing anything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { isSpareWaiting, type SpareGoMessage } from '../eval-process/messages.js';
import { EVAL_PROCESS_MAIN } from '../paths.js';
import { heldModelKeys, withoutModelKeys } from '../core/model-keys.js';

/** How the eval process ended. */
export interface EvalExit {
  exitCode: number | null;
  signal: string | null;
}

/** The running eval process of a run, however it was started. */
export interface EvalRunProcess {
  kill(signal: NodeJS.Signals): void;
  /** Settles once the process has exited and its output is in the run's log files. */
  readonly exited: Promise<EvalExit>;
}

export class EvalSpare {
  readonly #child: ChildProcess;
  /** The environment it was started with: what the CLI sets later is sent with go. */
  readonly #env: Readonly<NodeJS.ProcessEnv>;
  readonly #early: { stdout: Buffer[]; stderr: Buffer[] } = { stdout: [], stderr: [] };
  readonly #waiting: Promise<boolean>;
  readonly #closed: Promise<EvalExit>;
  #taken = false;

  constructor() {
    this.#env = { ...process.env };
    // The model keys go with go, over the IPC channel, never in the environment.
    this.#child = spawn(process.execPath, [EVAL_PROCESS_MAIN, '--await-go'], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: withoutModelKeys(process.env),
    });
    const child = this.#child;
    child.stdout!.on('data', (b: Buffer) => this.#early.stdout.push(b));
    child.stderr!.on('data', (b: Buffer) => this.#early.stderr.push(b));
    // Until go, nothing of the spare may keep the CLI alive.
    child.unref();
    child.channel?.unref();
    for (const s of [child.stdout, child.stderr]) (s as unknown as { unref?: () => void }).unref?.();
    this.#closed = new Promise((resolve) => {
      child.on('error', () => resolve({ exitCode: null, signal: null }));
      child.on('close', (exitCode, signal) => resolve({ exitCode, signal }));
    });
    this.#waiting = new Promise((resolve) => {
      child.on('message', (m: unknown) => {
        if (isSpareWaiting(m)) resolve(true);
      });
      void this.#closed.then(() => resolve(false));
    });
  }

  /** The spare's process id (undefined when it could not be spawned). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * Hands the spare the run in `runDir`, its output appended to the two log files from its
   * first line on. Resolves null when the spare is gone (the caller starts a fresh process).
   */
  async go(runDir: string, logs: { stdout: string; stderr: string }): Promise<EvalRunProcess | null> {
    if (this.#taken) throw new Error('this eval spare was already handed a run');
    this.#taken = true;
    const child = this.#child;
    // From here the run keeps this process alive until its eval process is gone and its output
    // read; first while it waits for the spare to finish loading.
    child.ref();
    for (const s of [child.stdout, child.stderr]) (s as unknown as { ref?: () => void }).ref?.();
    if (!(await this.#waiting) || !child.connected) return null;
    const files = {
      stdout: this.#logTo(child.stdout!, this.#early.stdout, logs.stdout),
      stderr: this.#logTo(child.stderr!, this.#early.stderr, logs.stderr),
    };
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(withoutModelKeys(process.env))) if (this.#env[k] !== v) env[k] = v;
    child.send({ type: 'go', runDir, env, modelKeys: heldModelKeys() } satisfies SpareGoMessage);
    let killTimer: NodeJS.Timeout | undefined;
    const exited = this.#closed.then(async (exit) => {
      clearTimeout(killTimer);
      await Promise.all([files.stdout, files.stderr].map((f) => new Promise<void>((r) => (f.closed ? r() : f.once('close', () => r())))));
      return exit;
    });
    return {
      exited,
      kill: (signal) => {
        child.kill(signal);
        // As `evalctl run` always did: SIGKILL if a SIGTERM is not obeyed within the grace period.
        if (signal === 'SIGTERM' && !killTimer) killTimer = setTimeout(() => child.kill('SIGKILL'), CANCEL_GRACE_MS).unref();
      },
    };
  }

  /** Stops a spare that was never handed a run; it exits 0 and writes nothing. Idempotent. */
  discard(): void {
    if (this.#taken) return;
    this.#taken = true;
    this.#child.kill('SIGTERM');
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
  }

  #logTo(from: NodeJS.ReadableStream, early: Buffer[], path: string): WriteStream {
    const to = createWriteStream(path, { flags: 'a' });
    // A log that cannot be written costs the log, never the run.
    to.on('error', () => {});
    from.removeAllListeners('data');
    if (early.length > 0) to.write(Buffer.concat(early));
    early.length = 0;
    from.pipe(to);
    return to;
  }
}

/** After SIGTERM (Ctrl-C) the eval process gets this long to write its summary before it is killed. */
export const CANCEL_GRACE_MS = 10_000;

let spare: EvalSpare | undefined;

/** Starts the spare for `evalctl run argv` unless the command will start no local run. */
export function startEvalSpareFor(argv: readonly string[]): void {
  const noRun = argv.some((a) => a === '--help' || a === '-h' || a === '--server' || a.startsWith('--server='));
  if (!noRun && !spare) spare = new EvalSpare();
}

/** The spare started for this command, once; undefined when there is none. */
export function takeEvalSpare(): EvalSpare | undefined {
  const s = spare;
  spare = undefined;
  return s;
}

/** Stops a spare nobody took (the command ended without starting a run). */
export function discardEvalSpare(): void {
  takeEvalSpare()?.discard();
}
