/**
 * Messages the backend sends a running eval process on its IPC channel. A shared host that
 * died was restarted on a new URL: calls of that nodeset should go there from now on.
 * `secret`: the restarted host's secret (docs/host-protocol.md); the IPC channel is private to the two processes.
 */
export type BackendToEvalMessage = { type: 'sharedHostMoved'; nodeset: string; url: string; secret?: string };
