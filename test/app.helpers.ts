/** Shared by the app tests: a real server on port 0 with a temp outputs dir, and real clients. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResultPromise } from 'execa';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { buildApp, type App, type AppOptions } from '../src/app.js';

export interface GqlResult<T = Record<string, any>> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

export interface TestServer {
  app: App;
  url: string;
  dir: string;
  gql<T = Record<string, any>>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GqlResult<T>>;
  ws(connectionParams?: Record<string, unknown>): Client;
  stop(opts?: { cancelRunning?: boolean }): Promise<void>;
  /** Stops the app as a SIGTERM would (running runs are not cancelled) and keeps its folder, for a restart. */
  halt(): Promise<void>;
}

const quietLogger = { info: () => {}, warn: () => {}, error: (m: string) => process.stderr.write(`[server] ${m}\n`) };

/** `at`: the folder and port of a server started before (a restart); by default a new temp folder and port 0. */
export async function startServer(options: Partial<AppOptions> = {}, at?: { dir: string; port: number }): Promise<TestServer> {
  const dir = at?.dir ?? (await mkdtemp(join(tmpdir(), 'app-test-')));
  const app = buildApp({
    outputsDir: join(dir, 'outputs'),
    logger: quietLogger,
    webDir: join(dir, 'no-web'),
    ...options,
    scheduler: { tickIntervalMs: 200, cancelGraceMs: 3000, sharedHostIdleMs: 0, ...options.scheduler },
  });
  let url: string;
  try {
    ({ url } = await app.start(at?.port ?? 0));
  } catch (err) {
    // A server that cannot start (a test of that) leaves no temp folder behind.
    if (!at) await rm(dir, { recursive: true, force: true }).catch(() => {});
    throw err;
  }
  const clients: Client[] = [];
  let stopped = false;
  return {
    app,
    url,
    dir,
    gql: (query, variables, headers) => gql(url, query, variables, headers),
    ws(connectionParams) {
      const client = createClient({
        url: url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: true,
        ...(connectionParams ? { connectionParams } : {}),
      });
      clients.push(client);
      return client;
    },
    async halt() {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled(clients.map((c) => c.dispose()));
      await app.stop({ cancelRunning: false });
    },
    async stop(opts) {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled(clients.map((c) => c.dispose()));
      await app.stop({ cancelRunning: true, ...opts });
      await rm(dir, { recursive: true, force: true }).catch(() => {});
    },
  };
}

export async function gql<T = Record<string, any>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GqlResult<T>> {
  const res = await fetch(url + '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as GqlResult<T>;
}

/** Every payload of a subscription over graphql-ws, resolved when the server completes it. */
export function wsCollect<T = Record<string, any>>(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
  onNext?: (p: GqlResult<T>) => void,
): Promise<Array<GqlResult<T>>> {
  const out: Array<GqlResult<T>> = [];
  return new Promise((resolve, reject) => {
    client.subscribe<T>(
      { query, ...(variables ? { variables } : {}) },
      {
        next: (p) => {
          out.push(p as GqlResult<T>);
          onNext?.(p as GqlResult<T>);
        },
        error: (err) => reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
        complete: () => resolve(out),
      },
    );
  });
}

/** Every `next` payload of a subscription over SSE, resolved on the `complete` event. */
export async function sseCollect<T = Record<string, any>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
  onNext?: (p: GqlResult<T>) => void,
): Promise<{ status: number; events: Array<GqlResult<T>> }> {
  const res = await fetch(url + '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  if (!res.ok || !res.body) return { status: res.status, events: [] };
  const events: Array<GqlResult<T>> = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (event === 'complete') return { status: res.status, events };
      if (event === 'next' && data.length > 0) {
        const payload = JSON.parse(data.join('\n')) as GqlResult<T>;
        events.push(payload);
        onNext?.(payload);
      }
    }
  }
  return { status: res.status, events };
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const START_EVAL = `mutation Start($input: StartEvalInput!) { startEval(input: $input) { runId status viaSubprocess } }`;

export const PROGRESS = `subscription Progress($id: ID!) {
  runProgress(id: $id) { id status seq episodesDone episodeCount pid aggregateMetrics { name mean count } }
}`;

export function codeOf(result: GqlResult): unknown {
  return result.errors?.[0]?.extensions?.code;
}

/** The loopback URL `evalctl serve` prints on stdout once it listens. */
export function urlFrom(proc: ResultPromise): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void proc.catch(reject);
  });
}

/** Writes `<ws>/graphs/<name>.json`: one env_dataset sample per episode, its target as the metric (a graph that only reads a dataset). */
export async function writeDatasetProbeGraph(ws: string, name: string): Promise<void> {
  await mkdir(join(ws, 'graphs'), { recursive: true });
  await writeFile(
    join(ws, 'graphs', `${name}.json`),
    JSON.stringify({
      name,
      step_budget: 1,
      nodes: [
        { id: 'env', type: 'env_dataset__sample' },
        { id: 'out', type: 'graphOut' },
      ],
      edges: [{ from: 'env.target', to: 'out.target' }],
    }),
  );
}
