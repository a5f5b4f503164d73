/**
 * The command line that runs `argv` in an episode's bubblewrap sandbox: rlimits set by
 * `prlimit`, the sandbox's own uid (as root, via `setpriv`: the process limit then counts this
 * sandbox alone, and files of other users stay unreadable), then `bwrap` with every namespace
 * unshared (no network, own PIDs), an empty read-only root holding only /usr (and the /bin, /lib
 * links), a few harmless /etc files, and the episode's directory as the one writable place,
 * mounted at /workspace (and a sibling as /tmp). The environment is built from nothing.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import type { SandboxLimits } from './sandbox-limits.js';

/** Where the episode's directory appears inside the sandbox. */
export const SANDBOX_WORKDIR = '/workspace';
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

const TOP_LEVEL = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
const ETC_FILES = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'passwd', 'group', 'nsswitch.conf'];

let systemArgs: string[] | undefined;

/** Read-only system mounts: /usr, and /bin, /lib… as the links or folders they are on this machine. */
function systemMounts(): string[] {
  if (systemArgs) return systemArgs;
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const name of TOP_LEVEL) {
    try {
      const st = lstatSync(`/${name}`);
      if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(`/${name}`), `/${name}`);
      else if (st.isDirectory()) args.push('--ro-bind', `/${name}`, `/${name}`);
    } catch {
      // Not on this machine.
    }
  }
  for (const name of ETC_FILES) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  systemArgs = args;
  return args;
}

export interface SandboxIdentity {
  /** The episode's working directory on this machine. */
  dir: string;
  /** What the sandbox sees as /tmp (outside the working directory: a listing does not show it). */
  tmp: string;
  /** The uid (and gid) the sandbox runs as; undefined when this process is not root. */
  uid: number | undefined;
}

const MIB = 1024 * 1024;

export function sandboxArgv(id: SandboxIdentity, limits: SandboxLimits, argv: readonly string[]): string[] {
  const rlimits = [
    `--cpu=${limits.cpuSec}`,
    `--as=${limits.memoryMb * MIB}`,
    `--fsize=${limits.fileSizeMb * MIB}`,
    '--nofile=256',
    '--core=0',
    // Without a uid of its own, RLIMIT_NPROC would count every process of the server's user.
    ...(id.uid !== undefined ? [`--nproc=${limits.maxProcs}`] : []),
  ];
  const user = id.uid !== undefined ? ['setpriv', `--reuid=${id.uid}`, `--regid=${id.uid}`, '--clear-groups', '--inh-caps=-all', '--'] : [];
  return [
    'prlimit',
    ...rlimits,
    '--',
    ...user,
    'bwrap',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    ...systemMounts(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--bind',
    id.dir,
    SANDBOX_WORKDIR,
    '--bind',
    id.tmp,
    '/tmp',
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORKDIR,
    '--clearenv',
    '--setenv',
    'PATH',
    SANDBOX_PATH,
    '--setenv',
    'HOME',
    SANDBOX_WORKDIR,
    '--setenv',
    'TMPDIR',
    '/tmp',
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--',
    ...argv,
  ];
}
