/**
 * The hosts this process serves in-process (no child process, no socket), by their
 * `inproc://` URL. A HostClient for such a URL hands each request to the host's `handle`
 * with the same JSON body, and parses the same JSON answer, as over HTTP, so a result cannot
 * tell the two apart; what it saves is the process hand-offs of every call.
 */
import type { JsonHttpAnswer, JsonHttpRequest } from './json-http-server.js';

/** What a host must offer to be served in-process: its request handler. */
export interface InProcessTarget {
  handle(req: JsonHttpRequest): Promise<JsonHttpAnswer>;
}

export const IN_PROCESS_SCHEME = 'inproc:';

const targets = new Map<string, InProcessTarget>();
let next = 0;

/** Whether `url` names an in-process host (served or stopped). */
export function isInProcessUrl(url: string): boolean {
  return url.startsWith(`${IN_PROCESS_SCHEME}//`);
}

/** Serves `target` under a new URL (`inproc://<label>.<n>`), unique for this process's life. */
export function registerInProcessHost(label: string, target: InProcessTarget): string {
  next += 1;
  const url = `${IN_PROCESS_SCHEME}//${label.replace(/[^A-Za-z0-9_-]/g, '-')}.${next}`;
  targets.set(url, target);
  return url;
}

/** The host under `url`; undefined once it stopped (its calls then fail as to a host that is gone). */
export function inProcessHost(url: string): InProcessTarget | undefined {
  return targets.get(url);
}

/** Stops serving `url`. Idempotent. */
export function unregisterInProcessHost(url: string): void {
  targets.delete(url);
}
