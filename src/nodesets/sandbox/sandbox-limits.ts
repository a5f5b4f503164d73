/** The limits every process of a sandbox runs under, read from a `sandbox__*` node's config. */
import { showValue } from '../../core/show-value.js';
import { BadInputError } from '../../errors.js';
import { numberConfig } from '../_lib/config.js';

export interface SandboxLimits {
  /** Wall-clock limit of one tool call. @default 10000 */
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL once a call is stopped. @default 1000 */
  killGraceMs: number;
  /** stdout and stderr are each cut to this many characters. @default 8192 */
  maxOutputChars: number;
  /** CPU seconds of one process (RLIMIT_CPU). @default 30 */
  cpuSec: number;
  /** Address space of one process, in MiB (RLIMIT_AS). @default 1024 */
  memoryMb: number;
  /** Processes of the whole sandbox (RLIMIT_NPROC on the sandbox's own uid; needs root). @default 64 */
  maxProcs: number;
  /** Largest file a process may write, in MiB (RLIMIT_FSIZE). @default 64 */
  fileSizeMb: number;
  /** Wall-clock limit of the check. @default 30000 */
  checkTimeoutMs: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  timeoutMs: 10_000,
  killGraceMs: 1_000,
  maxOutputChars: 8_192,
  cpuSec: 30,
  memoryMb: 1_024,
  maxProcs: 64,
  fileSizeMb: 64,
  checkTimeoutMs: 30_000,
};

const KEYS: Record<keyof SandboxLimits, string> = {
  timeoutMs: 'timeout_ms',
  killGraceMs: 'kill_grace_ms',
  maxOutputChars: 'max_output_chars',
  cpuSec: 'cpu_sec',
  memoryMb: 'memory_mb',
  maxProcs: 'max_procs',
  fileSizeMb: 'file_size_mb',
  checkTimeoutMs: 'check_timeout_ms',
};

export function sandboxLimitsOf(config: Record<string, unknown>): SandboxLimits {
  const limits = { ...DEFAULT_SANDBOX_LIMITS };
  for (const [field, key] of Object.entries(KEYS) as Array<[keyof SandboxLimits, string]>) {
    const n = numberConfig(config, key, DEFAULT_SANDBOX_LIMITS[field]);
    if (!Number.isInteger(n) || n < 1) throw new BadInputError(`config ${key} must be a positive integer, got ${showValue(config[key])}`);
    limits[field] = n;
  }
  return limits;
}
