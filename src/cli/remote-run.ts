/**
 * `evalctl run --server URL`: the run is queued on a server (startEval) instead of run here,
 * and followed over its runProgress subscription (Server-Sent Events) with the same live line
 * and final table as a local run. Ctrl-C cancels it on the server (cancelRun) and waits for
 * the end. The token comes from `--token` or EVAL_API_TOKEN.
 */
import type { RunConcurrency } from '../spec/run-concurrency.js';
import { CodedError, type ErrorCode, errorMessage, isPublicCode } from '../errors.js';
import type { RunInput } from '../spec/run-spec.js';
import type { RunSummary } from '../store/types.js';

const PROGRESS = `subscription Progress($id: ID!) {
  runProgress(id: $id) { id status seq graphName episodesDone episodeCount aggregateMetrics { name mean stderr count min max } error { code message } }
}`;

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED']);

/** A refusal from the server, with its code. */
export class RemoteError extends CodedError {}

interface GqlError {
  message: string;
  extensions?: { code?: string };
}

function remoteError(errors: GqlError[] | undefined, fallback: string): RemoteError {
  const first = errors?.[0];
  const code = first?.extensions?.code;
  const known: ErrorCode = code && isKnown(code) ? code : 'INTERNAL_SERVER_ERROR';
  return new RemoteError(known, `the server refused: ${errors?.map((e) => e.message).join('; ') ?? fallback}`);
}

/** A code the server shows as it is (errors.ts's one table); any other is said as an internal error. */
const isKnown = (code: string): code is ErrorCode => isPublicCode(code);

export interface RemoteOptions {
  /** The server's base URL (a trailing /graphql is accepted). */
  server: string;
  token: string | undefined;
  /** Seconds startEval may wait for room in a full queue. */
  waitForRoomSec: number | undefined;
}

export class RemoteServer {
  readonly base: string;
  readonly #headers: Record<string, string>;

  constructor(opts: Pick<RemoteOptions, 'server' | 'token'>) {
    this.base = opts.server.replace(/\/+$/, '').replace(/\/graphql$/, '');
    this.#headers = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  }

  async #fetch(path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(this.base + path, { ...init, headers: { ...this.#headers, ...(init.headers as Record<string, string>) } });
    } catch (err) {
      throw new RemoteError('INTERNAL_SERVER_ERROR', `cannot reach ${this.base}: ${errorMessage((err as Error).cause ?? err)}`);
    }
  }

  async gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const res = await this.#fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json().catch(() => ({}))) as { data?: T; errors?: GqlError[] };
    if (body.errors?.length || !body.data) throw remoteError(body.errors, `HTTP ${res.status}`);
    return body.data;
  }

  /** Queues the run; its id, and what bounds its concurrency as the server sees it (null when it cannot tell). */
  async start(input: RunInput, waitForRoomSec: number | undefined): Promise<{ runId: string; concurrency: RunConcurrency | null }> {
    const data = await this.gql<{ startEval: { runId: string; run: { concurrency: RunConcurrency | null } } }>(
      'mutation Start($input: StartEvalInput!) { startEval(input: $input) { runId status run { concurrency { workers perWorker maxInFlight asked basis limits { name limit reason } } } } }',
      { input: { ...input, ...(waitForRoomSec !== undefined ? { waitForRoomSec } : {}) } },
    );
    return { runId: data.startEval.runId, concurrency: data.startEval.run.concurrency };
  }

  async cancel(runId: string): Promise<void> {
    await this.gql('mutation Cancel($id: ID!) { cancelRun(id: $id) { id } }', { id: runId });
  }

  /** Each state of the run from now to its end (the subscription over SSE). */
  async *progress(
    runId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<Partial<RunSummary> & { status: string; episodesDone: number; episodeCount: number }> {
    const res = await this.#fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: PROGRESS, variables: { id: runId } }),
      ...(signal ? { signal } : {}),
    });
    if (!res.ok || !res.body) {
      const body = (await res.json().catch(() => ({}))) as { errors?: GqlError[] };
      throw remoteError(body.errors, `HTTP ${res.status}`);
    }
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (event === 'complete') return;
        if (event !== 'next' || data.length === 0) continue;
        const payload = JSON.parse(data.join('\n')) as { data?: { runProgress: RunSummary }; errors?: GqlError[] };
        if (payload.errors?.length || !payload.data) throw remoteError(payload.errors, 'no data');
        const state = { ...payload.data.runProgress, runId: runId };
        yield state;
        if (TERMINAL.has(state.status)) return;
      }
    }
  }

  /** The run's summary.json as the server exports it. */
  async summary(runId: string): Promise<RunSummary> {
    const res = await this.#fetch(`/runs/${encodeURIComponent(runId)}/export.json`);
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as { errors?: GqlError[] };
      throw remoteError(body.errors, `HTTP ${res.status}`);
    }
    return (await res.json()) as RunSummary;
  }
}
