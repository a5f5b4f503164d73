/**
 * The backend on one port: GraphQL over HTTP (with GraphiQL in a browser and SSE for
 * `Accept: text/event-stream`) and over WebSocket (graphql-ws) at /graphql, episode assets at
 * /runs/<runId>/episodes/<index>/assets/<name>, /healthz, and the dashboard's build at /.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { resolve } from 'node:path';
import { GraphQLError, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga, type YogaLogger } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { BadInputError, EvalError, errorMessage, isClientFault } from './errors.js';
import { bearerOf, CSRF_HEADER, hostAllowed, isLoopbackHost, normaliseAllowedHost, originAllowed, postIsPreflighted, requestToken, sameToken } from './http/access.js';
import { ASSET_ROUTE, serveAsset } from './http/assets.js';
import { sendError, sendJson } from './http/respond.js';
import { serveStatic } from './http/static-files.js';
import { WEB_DIST_DIR } from './paths.js';
import { assetUrlPath, type ApiContext } from './resolvers/context.js';
import { createMaskError } from './resolvers/errors.js';
import { buildSchema } from './resolvers/index.js';
import { useQueryLimits, type QueryLimits } from './resolvers/limits.js';
import { PlayRunner } from './resolvers/play-runner.js';
import { createApiPubSub } from './resolvers/pubsub.js';
import { useRequestErrorStatus } from './resolvers/request-error-status.js';
import { GraphCatalog } from './graph/graph-catalog.js';
import { NodesetRegistry } from './nodeset-registry/registry.js';
import { JobScheduler, type JobSchedulerOptions } from './scheduler/job-scheduler.js';
import type { SchedulerEvent, SchedulerLogger } from './scheduler/types.js';
import { RunReader } from './store/run-reader.js';
import { RunWatcher } from './store/run-watcher.js';

export interface AppOptions {
  /** Holds `eval_runs/` and the catalog `db.json`. */
  outputsDir: string;
  /** Interface to listen on. Anything but loopback requires `token`. @default '127.0.0.1' */
  host?: string;
  /** Bearer token every HTTP, SSE and WebSocket client must present. @default process.env.EVAL_API_TOKEN */
  token?: string;
  /** Browser origins allowed besides this server's own and loopback (e.g. a dev server). @default none */
  allowedOrigins?: string[];
  /**
   * Host names a request may address the server by, besides loopback ones (localhost, 127.x,
   * [::1]); `.example.org` allows every name under example.org. Checked whenever the server
   * listens on loopback, and beyond loopback once any is given (there the token guards it). @default none
   */
  allowedHosts?: string[];
  /** Passed to the JobScheduler (outputsDir and backendUrl are set by the app). */
  scheduler?: Partial<JobSchedulerOptions>;
  /** The dashboard's build. @default WEB_DIST_DIR */
  webDir?: string;
  /** Query depth and cost limits. @default depth 12, cost 50000 */
  limits?: QueryLimits;
  /** @default lines on stderr prefixed `[server]` */
  logger?: SchedulerLogger;
}

export interface App {
  /** Listens on `port` (0 or absent: any free port). Resolves with the base URL (e.g. http://127.0.0.1:4000). */
  start(port?: number): Promise<{ url: string; port: number }>;
  /**
   * Stops serving, then waits for the running runs to finish (no queued run starts meanwhile;
   * queued runs stay queued for the next server), then stops the scheduler. With
   * `cancelRunning` the running runs are cancelled instead (also when given to a later call
   * while the first one waits). Idempotent.
   */
  stop(opts?: { cancelRunning?: boolean }): Promise<void>;
  readonly scheduler: JobScheduler;
}

const defaultLogger: SchedulerLogger = {
  info: (m) => process.stderr.write(`[server] ${m}\n`),
  warn: (m) => process.stderr.write(`[server] warning: ${m}\n`),
  error: (m) => process.stderr.write(`[server] error: ${m}\n`),
};

function isClientError(err: unknown): boolean {
  if (err instanceof EvalError) return isClientFault(err.code);
  if (err instanceof GraphQLError) return isClientFault(String(err.extensions.code)) || isClientError(err.originalError);
  return false;
}

/** What GraphiQL shows first: a query that answers on any server. */
const GRAPHIQL_DEFAULT_QUERY = `# The batch eval API: press the run button (or Ctrl+Enter). The docs are in the book icon.
{
  graphs {
    name
    description
  }
  queue {
    runId
    position
    waitingReason
  }
}
`;

function withoutHttpExtensions(result: ExecutionResult): FormattedExecutionResult | void {
  if (!result.errors?.some((e) => e.extensions.http !== undefined)) return undefined;
  return {
    ...result,
    errors: result.errors.map((e) => {
      const { http: _http, ...extensions } = e.toJSON().extensions ?? {};
      return { ...e.toJSON(), extensions };
    }),
  } as FormattedExecutionResult;
}

type EnvelopedArgs = ExecutionArgs & { yogaExecute: (args: ExecutionArgs) => unknown; yogaSubscribe: (args: ExecutionArgs) => unknown };

export function buildApp(options: AppOptions): App {
  if (!options || typeof options.outputsDir !== 'string' || options.outputsDir === '') {
    throw new BadInputError(`outputsDir must be a folder path, got ${JSON.stringify(options?.outputsDir)}`);
  }
  const host = options.host ?? '127.0.0.1';
  const token = (options.token ?? process.env.EVAL_API_TOKEN) || undefined;
  if (!isLoopbackHost(host) && !token) {
    throw new BadInputError(
      `refusing to listen on ${host} without a token: anyone who can reach it could start and cancel runs. Set EVAL_API_TOKEN (clients then send "Authorization: Bearer <token>"), or listen on 127.0.0.1`,
    );
  }
  const log = options.logger ?? defaultLogger;
  const outputsDir = resolve(options.outputsDir);
  const webDir = resolve(options.webDir ?? WEB_DIST_DIR);
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map((o) => o.replace(/\/$/, '')));
  const allowedHosts = new Set((options.allowedHosts ?? []).map(normaliseAllowedHost));
  // Beyond loopback the address it listens on is a name clients use too.
  if (allowedHosts.size > 0 && !isLoopbackHost(host) && host !== '0.0.0.0' && host !== '::') allowedHosts.add(normaliseAllowedHost(host));
  // A rebinding page cannot present the token, so beyond loopback with no list any Host is taken.
  const checkHost = isLoopbackHost(host) || allowedHosts.size > 0;
  const hostRefusal = (req: IncomingMessage) =>
    checkHost && !hostAllowed(req, allowedHosts)
      ? `Host ${JSON.stringify(req.headers.host)} is not a name of this server: use 127.0.0.1 or localhost, or start it with --allowed-hosts ${String(req.headers.host).replace(/:\d+$/, '')}`
      : undefined;
  let baseUrl = '';

  const scheduler = new JobScheduler({
    ...options.scheduler,
    outputsDir,
    backendUrl: () => baseUrl,
    logger: options.scheduler?.logger ?? log,
  });
  const workspaceDir = options.scheduler?.workspaceDir;
  const graphs = new GraphCatalog({
    ...(options.scheduler?.builtinGraphsDir ? { builtinDir: options.scheduler.builtinGraphsDir } : {}),
    ...(workspaceDir ? { workspaceDir } : {}),
  });
  const nodesets = {
    list: async () =>
      (
        await NodesetRegistry.scan({
          ...(options.scheduler?.builtinNodesetsDir ? { builtinDir: options.scheduler.builtinNodesetsDir } : {}),
          ...(workspaceDir ? { workspaceDir } : {}),
        })
      ).list(),
  };
  const runs = new RunReader(outputsDir);
  const watcher = new RunWatcher({ outputsDir, onError: (err, runId) => log.warn(`watching run ${runId}: ${errorMessage(err)}`) });
  const pubsub = createApiPubSub();
  const play = new PlayRunner({ graphs, nodesets, lock: scheduler });
  const services: Omit<ApiContext, 'signal'> = {
    outputsDir,
    scheduler,
    // The catalog opens in scheduler.start(); resolvers only run after that.
    catalog: {
      getRun: (id) => scheduler.catalog.getRun(id),
      listRuns: (opts) => scheduler.catalog.listRuns(opts),
      countRuns: (opts) => scheduler.catalog.countRuns(opts),
    },
    graphs,
    nodesets,
    runs,
    watcher,
    pubsub,
    play,
    assetUrl: assetUrlPath,
  };

  // Queue events arrive in bursts (a tick changes several jobs): publish once per turn of the loop.
  let queuePublish: NodeJS.Immediate | undefined;
  const publishQueue = () => {
    queuePublish ??= setImmediate(() => {
      queuePublish = undefined;
      try {
        pubsub.publish('queueChanged', { queue: scheduler.queue(), activeJobs: scheduler.activeJobs() });
      } catch (err) {
        log.warn(`publishing the queue: ${errorMessage(err)}`);
      }
    });
  };
  const onSchedulerEvent = (e: SchedulerEvent) => {
    // A run's status change (admitted, cancelled, reaped) reaches its watchers at once, and the file is read once more.
    if (e.type === 'run') watcher.offer(e.runId, e.summary);
    publishQueue();
  };

  const yogaLogger: YogaLogger = {
    debug: () => {},
    info: () => {},
    warn: (...args: unknown[]) => log.warn(args.map(String).join(' ')),
    error: (...args: unknown[]) => {
      // Errors a client caused are answered with their code, and unexpected ones were logged when masked.
      if (args.some((a) => isClientError(a) || a instanceof GraphQLError)) return;
      log.error(args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(' '));
    },
  };
  const yoga = createYoga<Record<string, unknown>, ApiContext>({
    schema: buildSchema(),
    graphqlEndpoint: '/graphql',
    context: ({ request }) => ({ ...services, ...(request?.signal ? { signal: request.signal } : {}) }),
    graphiql: { subscriptionsProtocol: 'WS', title: 'Batch eval API', defaultQuery: GRAPHIQL_DEFAULT_QUERY },
    // GraphiQL from the installed package, inlined in one page: nothing is fetched from a CDN, so it works offline. Loaded on first use (9 MB).
    renderGraphiQL: async (opts) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(opts),
    landingPage: false,
    logging: yogaLogger,
    maskedErrors: {
      maskError: createMaskError((err) => log.error(`unexpected error in a resolver: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)),
    },
    cors: allowedOrigins.size > 0 ? { origin: [...allowedOrigins], credentials: true } : false,
    plugins: [useQueryLimits(options.limits), useRequestErrorStatus()],
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const { pathname } = url;
    const badHost = hostRefusal(req);
    if (badHost) return sendError(res, 403, 'UNAUTHENTICATED', badHost);
    if (pathname === '/healthz') return sendJson(res, 200, { ok: true });
    const isApi = pathname === '/graphql' || pathname.startsWith('/graphql/');
    const assetMatch = ASSET_ROUTE.exec(pathname);
    if (isApi || assetMatch) {
      if (!originAllowed(req, allowedOrigins)) return sendError(res, 403, 'UNAUTHENTICATED', `origin ${req.headers.origin} is not allowed`);
      if (assetMatch && req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'BAD_USER_INPUT', `${req.method} is not allowed on assets`);
      // A CORS preflight never carries credentials; yoga answers it for allowed origins only.
      if (token && req.method !== 'OPTIONS' && !sameToken(requestToken(req, url), token)) {
        res.setHeader('www-authenticate', 'Bearer');
        return sendError(res, 401, 'UNAUTHENTICATED', 'missing or wrong token: send "Authorization: Bearer <token>"');
      }
      if (assetMatch) return serveAsset(req, res, runs, assetMatch);
      if (req.method === 'POST' && !postIsPreflighted(req)) {
        return sendError(
          res,
          415,
          'BAD_USER_INPUT',
          `POST /graphql needs content-type application/json (or application/graphql), or a ${CSRF_HEADER} header: a form or text/plain body is what any web page can send unasked`,
        );
      }
      return void (await yoga.requestListener(req, res));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'BAD_USER_INPUT', `${req.method} is not allowed here`);
    return serveStatic(req, res, webDir, pathname);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error(`${req.method} ${req.url}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      if (!res.headersSent) sendError(res, 500, 'INTERNAL_SERVER_ERROR', 'Unexpected error.');
      else res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (status: string) => {
      socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    if (hostRefusal(req)) return refuse('403 Forbidden');
    if (pathname !== '/graphql') return refuse('404 Not Found');
    if (!originAllowed(req, allowedOrigins)) return refuse('403 Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  const wsServer = useServer<{ token?: unknown } | undefined>(
    {
      // yoga's enveloped execute/subscribe ride on the args built in onSubscribe.
      execute: (args) => (args as EnvelopedArgs).yogaExecute(args) as never,
      subscribe: (args) => (args as EnvelopedArgs).yogaSubscribe(args) as never,
      onConnect: (ctx) => {
        if (!token) return true;
        const given = typeof ctx.connectionParams?.token === 'string' ? ctx.connectionParams.token : bearerOf(ctx.extra.request.headers.authorization);
        if (sameToken(given, token)) return true;
        ctx.extra.socket.close(CloseCode.Unauthorized, 'UNAUTHENTICATED: missing or wrong token in connection_init payload { token }');
        return false;
      },
      // `extensions.http` tells yoga which HTTP status to answer with; a WebSocket has none to give.
      onNext: (_ctx, _id, _payload, _args, result) => withoutHttpExtensions(result),
      onError: (_ctx, _id, _payload, errors) => withoutHttpExtensions({ errors })?.errors,
      onSubscribe: async (ctx, _id, payload) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
        });
        let document;
        try {
          document = parse(payload.query);
        } catch (err) {
          return [err as never];
        }
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
        const args: EnvelopedArgs = {
          schema,
          operationName: payload.operationName ?? null,
          document,
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          yogaExecute: execute,
          yogaSubscribe: subscribe,
        };
        return args;
      },
    },
    wss,
  );

  let stopping: Promise<void> | undefined;
  let unsubscribe: (() => void) | undefined;
  let cancelOnStop = false;
  let hurryDrain: (() => void) | undefined;

  /**
   * Waits for the running runs to finish, admitting nothing meanwhile (an eval process ends
   * with the server that started it, so leaving runs to finish means waiting for them).
   * A later stop({ cancelRunning: true }) cuts the wait short and the runs are cancelled.
   */
  async function drainRunning(): Promise<void> {
    if (cancelOnStop) return;
    const running = () => scheduler.activeJobs().length;
    if (running() === 0) return;
    const release = scheduler.acquireInteractiveLock('the server is stopping');
    log.info(`waiting for ${running()} running run(s) to finish before stopping (stop again with cancelRunning to cancel them)`);
    try {
      await new Promise<void>((done) => {
        const timer = setInterval(check, 250);
        const off = scheduler.subscribe(() => check());
        function check() {
          if (!cancelOnStop && running() > 0) return;
          clearInterval(timer);
          off();
          hurryDrain = undefined;
          done();
        }
        hurryDrain = check;
      });
    } finally {
      release();
    }
  }

  return {
    scheduler,
    async start(port = 0) {
      if (stopping) throw new BadInputError('this app was stopped; build a new one');
      await scheduler.start();
      unsubscribe = scheduler.subscribe(onSchedulerEvent);
      await new Promise<void>((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolveListen();
        });
      });
      const addr = server.address();
      const actualPort = typeof addr === 'object' && addr ? addr.port : port;
      const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
      baseUrl = `http://${urlHost}:${actualPort}`;
      log.info(`listening on ${baseUrl} (GraphQL at ${baseUrl}/graphql)`);
      return { url: baseUrl, port: actualPort };
    },
    stop(opts = {}) {
      if (opts.cancelRunning) {
        cancelOnStop = true;
        hurryDrain?.();
      }
      stopping ??= (async () => {
        const steps: Array<[string, () => Promise<unknown> | void]> = [
          ['websocket server', () => wsServer.dispose()],
          ['watcher', () => watcher.close()],
          [
            'http server',
            () =>
              new Promise<void>((done) => {
                for (const s of sockets) s.destroy();
                if (!server.listening) return done();
                server.close(() => done());
              }),
          ],
          ['running runs', () => drainRunning()],
          ['scheduler events', () => unsubscribe?.()],
          ['scheduler', () => scheduler.close({ cancelRunning: cancelOnStop })],
          ['yoga', () => yoga.dispose()],
        ];
        for (const [what, step] of steps) {
          try {
            await step();
          } catch (err) {
            log.warn(`stopping the ${what}: ${errorMessage(err)}`);
          }
        }
        if (queuePublish) clearImmediate(queuePublish);
      })();
      return stopping;
    },
  };
}
