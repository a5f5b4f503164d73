/**
 * Ties this process's life to its parent's. Node has no PR_SET_PDEATHSIG, so two signals are
 * watched: the IPC channel's `disconnect` (when started with one; unref'd so it never keeps
 * the process alive) and a change of `process.ppid` (reparenting), polled.
 */

export interface ParentWatchOptions {
  /** Called once, when the parent is gone. */
  onParentGone(reason: string): void;
  /** @default 500 */
  pollMs?: number;
}

/** Starts watching; returns a function that stops it. */
export function watchParent(opts: ParentWatchOptions): () => void {
  let fired = false;
  const fire = (reason: string) => {
    if (fired) return;
    fired = true;
    opts.onParentGone(reason);
  };
  const onDisconnect = () => fire('the IPC channel to the parent closed');
  if (process.channel) {
    process.channel.unref();
    process.on('disconnect', onDisconnect);
  }
  const original = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== original) fire(`the parent (pid ${original}) exited`);
  }, opts.pollMs ?? 500);
  timer.unref();
  return () => {
    clearInterval(timer);
    process.off('disconnect', onDisconnect);
  };
}
