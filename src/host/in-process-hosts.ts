/**
 * The hosts this process serves in-process (no child process, no socket), by their
 * `inproc://` URL. A HostClient for such a URL hands each request to the host's `handle`
 * with the same JSON body, and parses the same JSON answer, as over HTTP, so a result cannot
 * tell the two apart; what it saves is the process hand-offs of every call.
 */
import { HostError, errorMessage } from '../errors.js';
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

/** A request handed to a host without a socket, and its caller's hang-up. */
export interface InProcessCall {
  req: JsonHttpRequest;
  /** The caller went away: the request's `signal` aborts and its hang-up callbacks run, as when an HTTP caller disconnects. Idempotent. */
  hangUp(): void;
  readonly gone: boolean;
}

/** A request for a host in this process or one of its threads: the body is the JSON text HTTP would carry. */
export function inProcessCall(method: string, path: string, body: string | null | undefined): InProcessCall {
  let gone: Error | undefined;
  let controller: AbortController | undefined;
  let hangUps: Array<(reason: Error) => void> | undefined;
  return {
    req: {
      method,
      path,
      // The text as it is: the host parses it straight away (a Buffer would be made only to be turned back into text).
      body: body ?? '',
      // Made on first read: most handlers never look.
      get signal(): AbortSignal {
        controller ??= new AbortController();
        if (gone && !controller.signal.aborted) controller.abort(gone);
        return controller.signal;
      },
      onHangUp(cb) {
        if (gone) cb(gone);
        else {
          hangUps ??= [];
          hangUps.push(cb);
        }
      },
    },
    hangUp() {
      if (gone) return;
      gone = new HostError('the caller went away');
      controller?.abort(gone);
      for (const cb of hangUps?.splice(0) ?? []) cb(gone);
    },
    get gone() {
      return gone !== undefined;
    },
  };
}

/** The request's body as text: as it is from an in-process caller, UTF-8 decoded when it came off a socket. */
export function bodyText(req: JsonHttpRequest): string {
  return typeof req.body === 'string' ? req.body : req.body.toString('utf8');
}

/** A host's answer as the JSON text the HTTP server would send (one that cannot be serialised becomes a 500). */
export function answerText(a: JsonHttpAnswer): { status: number; text: string } {
  try {
    return { status: a.status, text: a.json ?? JSON.stringify(a.body ?? null) };
  } catch (err) {
    return { status: 500, text: JSON.stringify({ error: `the answer could not be serialised: ${errorMessage(err)}` }) };
  }
}
