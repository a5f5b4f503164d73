/**
 * Runs one tool call as a subprocess: the arguments as JSON on stdin, in the episode's
 * working directory, with a clean environment (PATH, and HOME/TMPDIR inside the working
 * directory: never the server's variables, so no API key or token), in a PID namespace of its
 * own where the machine allows (tool-isolation.ts), in its own process group so that a time
 * limit or the episode's end kills everything it started. What it prints is the result, with
 * any model key in it redacted; a failure or a timeout becomes an error message as the result,
 * never a throw.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { redactFingerprinted } from '../../core/secret-fingerprints.js';
import { killGroup, TMP_SUBDIR } from './episode-workdirs.js';
import { findProgram, isolatedArgv, type IsolationKind } from './tool-isolation.js';
import type { ToolDef } from './tool-set.js';

export interface ToolCallLimits {
  /** Wall-clock limit of one call. */
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL once the limit is reached. */
  killGraceMs: number;
  /** stdout and stderr are each cut to this many characters (in the result and the event). */
  maxOutputChars: number;
}

export interface ToolCallOutcome {
  /** The tool message's content: stdout, or `error: …`. */
  content: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  /** Why the call failed, when it did. */
  error?: string;
  truncated?: boolean;
}

/** The only variables a tool sees. */
export function toolEnv(cwd: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: cwd,
    TMPDIR: join(cwd, TMP_SUBDIR),
    LANG: 'C.UTF-8',
    // bwrap sets it; set everywhere, a tool sees the same variables however it runs.
    PWD: cwd,
  };
}

/** SIGTERM to every process of group `pgid` but its leader; false when the group has none left. */
function terminateGroupBut(pgid: number): boolean {
  let alive = false;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === pgid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state, ppid, pgrp.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      process.kill(pid, 'SIGTERM');
      alive = true;
    } catch {
      // Gone meanwhile.
    }
  }
  try {
    process.kill(pgid, 0);
    return true;
  } catch {
    return alive;
  }
}

const cut = (s: string, max: number): string => (s.length > max ? s.slice(0, max) : s);
const TRUNCATED_NOTE = (max: number) => `\n[output cut at ${max} characters]`;

export async function runToolCall(
  tool: ToolDef,
  argumentsJson: string,
  cwd: string,
  limits: ToolCallLimits,
  opts: { signal: AbortSignal; groups: Set<number>; isolation: IsolationKind },
): Promise<ToolCallOutcome> {
  const t0 = performance.now();
  const { signal, groups } = opts;
  const env = toolEnv(cwd);
  const [file, ...args] = tool.command as [string, ...string[]];
  // Looked up here: inside a sandbox a missing program would be the sandbox's error, not a clear one.
  const program = findProgram(file, env.PATH!, cwd);
  if (program === undefined) {
    const error = `cannot start ${tool.name}: ${file} not found`;
    const durationMs = Math.round(performance.now() - t0);
    return { content: `error: ${error}`, error, exitCode: null, stdout: '', stderr: '', durationMs, timedOut: false };
  }
  const [wrapper, ...wrapped] = isolatedArgv(opts.isolation, [program, ...args], cwd) as [string, ...string[]];
  let timedOut = false;
  const sub = execa(wrapper, wrapped, {
    cwd,
    env,
    extendEnv: false,
    input: argumentsJson,
    detached: true,
    reject: false,
    maxBuffer: limits.maxOutputChars,
    stripFinalNewline: true,
  });
  const pgid = sub.pid;
  let graceTimer: NodeJS.Timeout | undefined;
  // Signals go to the whole group: a child the tool started in the background must not outlive the call.
  const stop = (): void => {
    if (pgid === undefined) return;
    // bwrap dies of a SIGTERM and takes its sandbox along at once: the tool's grace needs the wrapper spared until the SIGKILL.
    if (opts.isolation === 'bwrap') {
      if (!terminateGroupBut(pgid)) return;
    } else {
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        return;
      }
    }
    graceTimer ??= setTimeout(() => killGroup(pgid), limits.killGraceMs);
  };
  const limit = setTimeout(() => {
    timedOut = true;
    stop();
  }, limits.timeoutMs);
  const onAbort = (): void => {
    if (pgid !== undefined) killGroup(pgid);
  };
  if (pgid !== undefined) groups.add(pgid);
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  let r: Awaited<typeof sub>;
  try {
    r = await sub;
  } finally {
    clearTimeout(limit);
    clearTimeout(graceTimer);
    signal.removeEventListener('abort', onAbort);
    if (pgid !== undefined) {
      killGroup(pgid);
      groups.delete(pgid);
    }
  }
  const durationMs = Math.round(performance.now() - t0);
  // Redacted by fingerprint: this process never holds a key, so a tool that runs here cannot find one.
  const stdout = redactFingerprinted(cut(typeof r.stdout === 'string' ? r.stdout : '', limits.maxOutputChars));
  const stderr = redactFingerprinted(cut(typeof r.stderr === 'string' ? r.stderr : '', limits.maxOutputChars));
  const exitCode = typeof r.exitCode === 'number' ? r.exitCode : null;
  const truncated = r.isMaxBuffer;
  const base = { exitCode, stdout, stderr, durationMs, timedOut, ...(truncated ? { truncated } : {}) };

  let error: string | undefined;
  if (timedOut) error = `${tool.name} timed out after ${limits.timeoutMs} ms`;
  else if (signal.aborted) error = `${tool.name} was stopped: the episode ended`;
  else if (r.code === 'ENOENT' || (exitCode === null && r.signal === undefined)) error = `cannot start ${tool.name}: ${file} not found`;
  else if (r.signal) error = `${tool.name} was killed by ${r.signal}`;
  else if (exitCode !== 0) {
    const why = (stderr || stdout).trim();
    error = `${tool.name} exited with code ${exitCode}${why ? `: ${why}` : ''}`;
  }
  if (error !== undefined) return { ...base, content: `error: ${error}`, error };
  return { ...base, content: truncated ? `${stdout}${TRUNCATED_NOTE(limits.maxOutputChars)}` : stdout };
}
