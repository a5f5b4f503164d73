/**
 * Runs one command in an episode's sandbox: its own process group (a stop reaches everything
 * it started), a wall-clock limit (SIGTERM, then SIGKILL after the grace), capped output, and a
 * spawn environment of PATH alone (the sandbox's first process can read what it was started with).
 * A failure is an outcome, never a throw.
 */
import { execa } from 'execa';
import { redactFingerprinted } from '../../core/secret-fingerprints.js';
import { killGroup } from '../tools/episode-workdirs.js';

export interface ExecLimits {
  timeoutMs: number;
  killGraceMs: number;
  maxOutputChars: number;
}

export interface ExecOutcome {
  exitCode: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  truncated: boolean;
  /** Why it could not run, when it could not start at all. */
  startError?: string;
}

const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const cut = (s: unknown, max: number): string => (typeof s === 'string' ? (s.length > max ? s.slice(0, max) : s) : '');

export async function execInSandbox(
  argv: readonly string[],
  o: { input?: string; limits: ExecLimits; signal: AbortSignal; groups: Set<number> },
): Promise<ExecOutcome> {
  const t0 = performance.now();
  const [file, ...args] = argv as [string, ...string[]];
  let timedOut = false;
  const sub = execa(file, args, {
    env: { PATH: HOST_PATH },
    extendEnv: false,
    input: o.input ?? '',
    detached: true,
    reject: false,
    maxBuffer: o.limits.maxOutputChars,
    stripFinalNewline: true,
    cwd: '/',
  });
  const pgid = sub.pid;
  let grace: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (pgid === undefined) return;
    try {
      process.kill(-pgid, 'SIGTERM');
    } catch {
      return;
    }
    grace ??= setTimeout(() => killGroup(pgid), o.limits.killGraceMs);
  };
  const limit = setTimeout(() => {
    timedOut = true;
    stop();
  }, o.limits.timeoutMs);
  const onAbort = (): void => {
    if (pgid !== undefined) killGroup(pgid);
  };
  if (pgid !== undefined) o.groups.add(pgid);
  o.signal.addEventListener('abort', onAbort, { once: true });
  if (o.signal.aborted) onAbort();
  let r: Awaited<typeof sub>;
  try {
    r = await sub;
  } finally {
    clearTimeout(limit);
    clearTimeout(grace);
    o.signal.removeEventListener('abort', onAbort);
    if (pgid !== undefined) {
      killGroup(pgid);
      o.groups.delete(pgid);
    }
  }
  const durationMs = Math.round(performance.now() - t0);
  return {
    exitCode: typeof r.exitCode === 'number' ? r.exitCode : null,
    ...(r.signal ? { signal: r.signal } : {}),
    stdout: redactFingerprinted(cut(r.stdout, o.limits.maxOutputChars)),
    stderr: redactFingerprinted(cut(r.stderr, o.limits.maxOutputChars)),
    durationMs,
    timedOut,
    truncated: r.isMaxBuffer === true,
    ...(r.code === 'ENOENT' ? { startError: `${file} is not installed` } : {}),
  };
}
