/**
 * GraphQL over WebSocket (graphql-ws) on the HTTP server's /graphql: the same access checks
 * at the upgrade, the token in `connection_init`, and yoga's enveloped execution.
 */
import type { Server } from 'node:http';
import type { ExecutionArgs, ExecutionResult, FormattedExecutionResult } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { bearerOf, sameToken } from '../http/access.js';
import type { Access } from './access.js';
import type { ApiYoga } from './yoga.js';

function withoutHttpExtensions(result: ExecutionResult): FormattedExecutionResult | undefined {
  if (!result.errors?.some((e) => e.extensions.http !== undefined)) return undefined;
  return {
    ...result,
    errors: result.errors.map((e) => {
      const { http: _http, ...extensions } = e.toJSON().extensions ?? {};
      return { ...e.toJSON(), extensions };
    }),
  } as FormattedExecutionResult;
}

type EnvelopedArgs = ExecutionArgs & {
  yogaExecute: (args: ExecutionArgs) => unknown;
  yogaSubscribe: (args: ExecutionArgs) => unknown;
};

/** Serves graphql-ws on `server`; the answer's dispose() closes every socket. */
export function attachWebSocket(server: Server, yoga: ApiYoga, access: Access): { dispose(): Promise<void> | void } {
  const { token } = access;
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (status: string) => {
      socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    // The HTTP routes refuse an absolute-form target too (routes.ts).
    if (!(req.url ?? '/').startsWith('/')) return refuse('400 Bad Request');
    if (access.hostRefusal(req)) return refuse('403 Forbidden');
    if (pathname !== '/graphql') return refuse('404 Not Found');
    if (!access.originAllowed(req)) return refuse('403 Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  return useServer<{ token?: unknown } | undefined>(
    {
      // yoga's enveloped execute/subscribe ride on the args built in onSubscribe.
      execute: (args) => (args as EnvelopedArgs).yogaExecute(args) as never,
      subscribe: (args) => (args as EnvelopedArgs).yogaSubscribe(args) as never,
      onConnect: (ctx) => {
        if (!token) return true;
        const given =
          typeof ctx.connectionParams?.token === 'string' ? ctx.connectionParams.token : bearerOf(ctx.extra.request.headers.authorization);
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
        let document: ReturnType<typeof parse>;
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
}
