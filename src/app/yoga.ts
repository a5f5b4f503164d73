/**
 * The GraphQL server: the schema over yoga, with the query limits, the HTTP status of request
 * errors, error masking, offline GraphiQL and CORS for the configured origins.
 */
import { GraphQLError } from 'graphql';
import { createYoga, type YogaLogger, type YogaServerInstance } from 'graphql-yoga';
import { CodedError, isClientFault } from '../errors.js';
import type { ApiContext } from '../resolvers/context.js';
import { createMaskError } from '../resolvers/errors.js';
import { buildSchema } from '../resolvers/index.js';
import { useQueryLimits, type QueryLimits } from '../resolvers/limits.js';
import { useRequestErrorStatus } from '../resolvers/request-error-status.js';
import type { SchedulerLogger } from '../scheduler/types.js';

export type ApiYoga = YogaServerInstance<Record<string, unknown>, ApiContext>;

function isClientError(err: unknown): boolean {
  if (err instanceof CodedError) return isClientFault(err.code);
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

export function createApiYoga(opts: {
  services: Omit<ApiContext, 'signal'>;
  log: SchedulerLogger;
  allowedOrigins: Set<string>;
  limits?: QueryLimits | undefined;
}): ApiYoga {
  const { services, log, allowedOrigins } = opts;
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
  return createYoga<Record<string, unknown>, ApiContext>({
    schema: buildSchema(),
    graphqlEndpoint: '/graphql',
    context: ({ request }) => ({ ...services, ...(request?.signal ? { signal: request.signal } : {}) }),
    graphiql: { subscriptionsProtocol: 'WS', title: 'Batch eval API', defaultQuery: GRAPHIQL_DEFAULT_QUERY },
    // GraphiQL from the installed package, inlined in one page: nothing is fetched from a CDN, so it works offline. Loaded on first use (9 MB).
    renderGraphiQL: async (opts) => {
      try {
        return (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(opts);
      } catch (err) {
        // Thrown from here, yoga's server adapter would answer with the stack trace.
        log.error(`GraphiQL could not be loaded: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        return '<!doctype html><title>GraphiQL</title><p>GraphiQL could not be loaded (the server log says why); the API at /graphql works without it.</p>';
      }
    },
    landingPage: false,
    logging: yogaLogger,
    maskedErrors: {
      maskError: createMaskError((err) =>
        log.error(`unexpected error in a resolver: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
      ),
    },
    cors: allowedOrigins.size > 0 ? { origin: [...allowedOrigins], credentials: true } : false,
    plugins: [useQueryLimits(opts.limits), useRequestErrorStatus()],
  });
}
