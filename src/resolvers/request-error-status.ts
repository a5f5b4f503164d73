/**
 * HTTP status of request errors: an operation that never started (its variables failed to
 * coerce, or it was refused before execution, e.g. by the cost limit) answers with `errors` and
 * no `data`. GraphQL over HTTP says that is 400 under `application/graphql-response+json`; graphql
 * and yoga leave it 200, so this marks those errors as yoga marks validation errors (`spec: true`
 * keeps 200 under `application/json`, as the spec wants there).
 */
import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

function markRequestErrors(result: unknown): void {
  if (!result || typeof result !== 'object' || isAsyncIterable(result)) return;
  const r = result as ExecutionResult;
  if ('data' in r || !r.errors?.length) return;
  for (const error of r.errors as readonly GraphQLError[]) {
    const ext = error.extensions as Record<string, unknown>;
    const http = (ext.http ?? {}) as { status?: number; spec?: boolean };
    ext.http = { ...http, status: http.status ?? 400, spec: http.spec ?? true };
  }
}

export function useRequestErrorStatus(): Plugin {
  return {
    onExecute: () => ({ onExecuteDone: ({ result }) => markRequestErrors(result) }),
    onSubscribe: () => ({ onSubscribeResult: ({ result }) => markRequestErrors(result) }),
  };
}
