/**
 * Messages the backend sends a running eval process on its IPC channel. A shared host that
 * died was restarted on a new URL: calls of that nodeset should go there from now on.
 * `secret`: the restarted host's secret (docs/host-protocol.md); the IPC channel is private to the two processes.
 */
export type BackendToEvalMessage = { type: 'sharedHostMoved'; nodeset: string; url: string; secret?: string };

/**
 * A spare eval process (`--await-go`) says `waiting` once it has loaded; its parent then sends
 * `go` (never before: a message that arrives before the spare listens is lost). `runDir` names
 * the run when the spare was started without `--run-dir`; `env` holds variables the parent set
 * after it started the spare.
 */
export type SpareWaitingMessage = { type: 'waiting' };
/** `modelKeys`: the keys of the parent's environment (core/model-keys.ts), for a run that starts its own model hosts. */
export type SpareGoMessage = { type: 'go'; runDir?: string; env?: Record<string, string>; modelKeys?: Record<string, string> };

/**
 * Sent by the eval process's main thread every `EVAL_HEARTBEAT_MS` (heartbeat.ts): a parent
 * that hears nothing for its limit takes the process as hung (docs/scheduler.md).
 */
export type HeartbeatMessage = { type: 'heartbeat' };

/** Everything an eval process sends its parent; `running` and `episodeDone` only with EVAL_EPISODE_IPC=1 (a scale-out worker's shard). */
export type EvalToBackendMessage = SpareWaitingMessage | HeartbeatMessage | { type: 'running' } | { type: 'episodeDone'; index: number };

export const isSpareWaiting = (m: unknown): m is SpareWaitingMessage => (m as { type?: unknown } | null)?.type === 'waiting';
export const isSpareGo = (m: unknown): m is SpareGoMessage => (m as { type?: unknown } | null)?.type === 'go';
