/**
 * The backend on one port: GraphQL over HTTP (with GraphiQL in a browser and SSE for
 * `Accept: text/event-stream`) and over WebSocket (graphql-ws) at /graphql, episode assets at
 * /runs/<runId>/episodes/<index>/assets/<name>, /healthz, and the dashboard's build at /.
 * Its parts live in src/app/: access checks, services, yoga, routes, WebSocket, graceful stop.
 */
import { resolve } from 'node:path';
import { accessOf } from './app/access.js';
import type { App, AppOptions } from './app/app-options.js';
import { runDrainer } from './app/drain-running.js';
import { createHttpServer } from './app/http-server.js';
import { createRequestHandler } from './app/routes.js';
import { buildServices } from './app/services.js';
import { attachWebSocket } from './app/websocket.js';
import { createApiYoga } from './app/yoga.js';
import { BadInputError, errorMessage } from './errors.js';
import { WEB_DIST_DIR } from './paths.js';
import type { SchedulerLogger } from './scheduler/types.js';

export type { App, AppOptions } from './app/app-options.js';

const defaultLogger: SchedulerLogger = {
  info: (m) => process.stderr.write(`[server] ${m}\n`),
  warn: (m) => process.stderr.write(`[server] warning: ${m}\n`),
  error: (m) => process.stderr.write(`[server] error: ${m}\n`),
};

export function buildApp(options: AppOptions): App {
  if (!options || typeof options.outputsDir !== 'string' || options.outputsDir === '') {
    throw new BadInputError(`outputsDir must be a folder path, got ${JSON.stringify(options?.outputsDir)}`);
  }
  const access = accessOf(options);
  const { host } = access;
  const log = options.logger ?? defaultLogger;
  let baseUrl = '';
  const { services, scheduler, scaleout, forwardEvents, cancelPending } = buildServices(options, log, () => baseUrl);
  const yoga = createApiYoga({
    services,
    log,
    allowedOrigins: access.allowedOrigins,
    limits: options.limits,
  });
  const handle = createRequestHandler({
    access,
    yoga,
    runs: services.runs,
    scaleout,
    webDir: resolve(options.webDir ?? WEB_DIST_DIR),
  });
  const http = createHttpServer(handle, log);
  const wsServer = attachWebSocket(http.server, yoga, access);
  const drainer = runDrainer(scheduler, log);
  let stopping: Promise<void> | undefined;
  let unsubscribe: (() => void) | undefined;

  return {
    scheduler,
    scaleout,
    async start(port = 0) {
      if (stopping) throw new BadInputError('this app was stopped; build a new one');
      // Before anything else: a Redis that cannot be reached is REDIS_UNAVAILABLE, not a server that cannot run anything.
      await scaleout?.start();
      await scheduler.start();
      unsubscribe = forwardEvents();
      const { url, port: actualPort } = await http.listen(port, host);
      baseUrl = url;
      log.info(`listening on ${baseUrl} (GraphQL at ${baseUrl}/graphql)`);
      return { url: baseUrl, port: actualPort };
    },
    stop(opts = {}) {
      if (opts.cancelRunning) drainer.hurry();
      stopping ??= (async () => {
        const steps: Array<[string, () => unknown]> = [
          ['websocket server', () => wsServer.dispose()],
          ['watcher', () => services.watcher.close()],
          ['http server', () => http.close()],
          ['running runs', () => drainer.drain()],
          ['scheduler events', () => unsubscribe?.()],
          ['scale-out head', () => scaleout?.close()],
          ['scheduler', () => scheduler.close({ cancelRunning: drainer.cancelRunning })],
          ['yoga', () => yoga.dispose()],
        ];
        for (const [what, step] of steps) {
          // Each step on its own: one that fails does not keep the others from running.
          await Promise.resolve()
            .then(step)
            .catch((err: unknown) => log.warn(`stopping the ${what}: ${errorMessage(err)}`));
        }
        cancelPending();
      })();
      return stopping;
    },
  };
}
