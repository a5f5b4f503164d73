/**
 * Where a tool call runs: in a PID namespace of its own, with its own /proc, so that it cannot
 * see another process (not the server, not a host), let alone read its environment
 * (`/proc/<pid>/environ`). With bubblewrap (`bwrap`) the system is also read-only and only the
 * episode's working directory is writable; else `unshare --pid --fork --mount-proc`. Where
 * neither works, a tool that runs code of the model's choosing (python, a command tool) is
 * refused with TOOL_ISOLATION_UNAVAILABLE, unless the operator sets EVAL_TOOL_ISOLATION=none;
 * the fixed built-ins (calculator, read_file, list_dir) still run. Fuller isolation (network,
 * limits) is for another layer; these arguments are its place.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { execa } from 'execa';
import { CodedError } from '../../errors.js';

/** `auto` (the default): bwrap, else unshare, else code-running tools are refused; `bwrap` or `unshare`: that one or refuse; `none`: no isolation, accepted by the operator. */
export const TOOL_ISOLATION_ENV = 'EVAL_TOOL_ISOLATION';

export type IsolationKind = 'bwrap' | 'unshare' | 'none';
const SETTINGS = ['auto', 'bwrap', 'unshare', 'none'] as const;
type Setting = (typeof SETTINGS)[number];

export interface ToolIsolation {
  kind: IsolationKind;
  /** Why there is none, when `kind` is `none` and the operator did not ask for that. */
  unavailable?: string;
}

export class ToolIsolationError extends CodedError {
  constructor(message: string) {
    // The code leads the message: a handler's error crosses to the episode as its message.
    super('TOOL_ISOLATION_UNAVAILABLE', `TOOL_ISOLATION_UNAVAILABLE: ${message}`);
    this.name = 'ToolIsolationError';
  }
}

const bwrapArgs = (cwd: string): string[] => [
  '--unshare-pid',
  '--die-with-parent',
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--bind',
  cwd,
  cwd,
  '--chdir',
  cwd,
  '--',
];
// Not root: a user namespace first, where the kernel lets a user make one (as bwrap does by itself).
const unshareArgs = [
  ...(process.getuid?.() === 0 ? [] : ['--user', '--map-root-user']),
  '--pid',
  '--fork',
  '--mount-proc',
  '--kill-child',
  '--',
];

/** `argv` wrapped to run under `kind` in `cwd`. */
export function isolatedArgv(kind: IsolationKind, argv: readonly string[], cwd: string): string[] {
  if (kind === 'bwrap') return ['bwrap', ...bwrapArgs(cwd), ...argv];
  if (kind === 'unshare') return ['unshare', ...unshareArgs, ...argv];
  return [...argv];
}

async function works(kind: 'bwrap' | 'unshare', path: string): Promise<string | undefined> {
  const cwd = process.cwd();
  const [file, ...args] = isolatedArgv(kind, ['true'], cwd) as [string, ...string[]];
  const r = await execa(file, args, { reject: false, timeout: 10_000, env: { PATH: path }, extendEnv: false, cwd });
  if (r.exitCode === 0) return undefined;
  if (r.code === 'ENOENT') return `${kind} is not installed`;
  const why = (typeof r.stderr === 'string' ? r.stderr.trim().split('\n')[0] : '') || `exit ${r.exitCode ?? r.signal}`;
  return `${kind}: ${why}`;
}

async function probe(setting: Setting, path: string): Promise<ToolIsolation> {
  if (setting === 'none') return { kind: 'none' };
  const problems: string[] = [];
  for (const kind of setting === 'auto' ? (['bwrap', 'unshare'] as const) : [setting]) {
    const problem = await works(kind, path);
    if (problem === undefined) return { kind };
    problems.push(problem);
  }
  return { kind: 'none', unavailable: problems.join('; ') };
}

let probed: { key: string; result: Promise<ToolIsolation> } | undefined;

/** How tool calls run on this machine, found once (a sandbox that starts `true`) and kept while the setting and PATH stay. */
export function toolIsolation(path: string, env: NodeJS.ProcessEnv = process.env): Promise<ToolIsolation> {
  const raw = (env[TOOL_ISOLATION_ENV] ?? '').trim() || 'auto';
  if (!(SETTINGS as readonly string[]).includes(raw)) {
    return Promise.reject(
      new ToolIsolationError(`${TOOL_ISOLATION_ENV} must be one of ${SETTINGS.join(', ')}, got ${JSON.stringify(raw)}`),
    );
  }
  const key = `${raw}\u0000${path}`;
  if (probed?.key !== key) probed = { key, result: probe(raw as Setting, path) };
  return probed.result;
}

/** The program `file` names, looked up on `path` as a spawn would (relative to `cwd` when it holds a slash); undefined when there is none. */
export function findProgram(file: string, path: string, cwd: string): string | undefined {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (file.includes('/')) {
    const full = isAbsolute(file) ? file : resolve(cwd, file);
    return executable(full) ? full : undefined;
  }
  for (const dir of path.split(delimiter)) if (dir !== '' && executable(join(dir, file))) return join(dir, file);
  return undefined;
}
