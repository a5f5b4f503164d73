/**
 * How errors leave the server: our error classes become GraphQL errors with
 * `extensions.code`; anything unexpected is masked as INTERNAL_SERVER_ERROR.
 */
import { GraphQLError } from 'graphql';
import { CodedError, GraphValidationError, isPublicCode, type PublicErrorCode, QueueFullError, RunPolicyError } from '../errors.js';
import { RunInputError, SpecInvalidError } from '../spec/spec-errors.js';
import { AuditManifestChangedError } from '../audit/audit-errors.js';

export type ApiErrorCode = PublicErrorCode;

export const MASKED_MESSAGE = 'Unexpected error.';

export function apiError(code: ApiErrorCode, message: string, extensions: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { ...extensions, code } });
}

/** A GraphValidationError this error is, or wraps. */
function graphProblems(err: unknown): GraphValidationError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof GraphValidationError) return e;
  }
  return undefined;
}

/** The extensions a known error carries, or undefined when it must be masked. */
function extensionsOf(err: unknown): Record<string, unknown> | undefined {
  const invalid = graphProblems(err);
  if (invalid && (err === invalid || (err instanceof CodedError && err.code === 'BAD_USER_INPUT'))) {
    return { code: 'BAD_USER_INPUT', reason: 'GRAPH_INVALID', problems: invalid.problems };
  }
  if (err instanceof QueueFullError) return { code: 'QUEUE_FULL', capacity: err.capacity };
  // What the operator does not allow, naming the field refused (overrides.tools.tools, overrides.llm.base_url, graphName).
  if (err instanceof RunPolicyError) return { code: err.code, field: err.field };
  if (err instanceof RunInputError) return { code: err.code, field: err.field, ...(err.limit !== undefined ? { limit: err.limit } : {}) };
  // A run dir's spec.json that is not a valid spec: said as it is, naming the field, for that run only.
  if (err instanceof SpecInvalidError) return { code: err.code, field: err.field };
  // What changed since the run, each with its kind and subject, so a client can say it.
  if (err instanceof AuditManifestChangedError) return { code: err.code, changes: err.changes };
  if (err instanceof CodedError && err.code !== 'INTERNAL_SERVER_ERROR' && isPublicCode(err.code)) return { code: err.code };
  return undefined;
}

/**
 * yoga's `maskError`: keeps GraphQL's own errors (syntax, validation, variables) and our
 * public errors, with their code; masks the rest and hands them to `onUnexpected`.
 */
export function createMaskError(onUnexpected: (err: unknown) => void) {
  return (error: unknown, message: string): Error => {
    if (error instanceof GraphQLError) {
      const original = error.originalError;
      // GraphQL's own errors (syntax, validation, variable coercion) are about the request.
      if (!original || original === error) return withCode(error, 'BAD_USER_INPUT');
      // A GraphQLError underneath without a code comes from graphql itself (a variable of the wrong type).
      if (original instanceof GraphQLError) return rewrap(error, error.message, { code: 'BAD_USER_INPUT', ...original.extensions });
      const ext = extensionsOf(original);
      if (ext) return rewrap(error, original.message, ext);
      onUnexpected(original);
      return rewrap(error, message || MASKED_MESSAGE, { code: 'INTERNAL_SERVER_ERROR' });
    }
    const ext = extensionsOf(error);
    if (ext) return new GraphQLError((error as Error).message, { extensions: ext });
    onUnexpected(error);
    return new GraphQLError(message || MASKED_MESSAGE, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  };
}

function rewrap(error: GraphQLError, message: string, extensions: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    ...(error.source ? { source: error.source } : {}),
    ...(error.positions ? { positions: error.positions } : {}),
    ...(error.path ? { path: error.path } : {}),
    // `http` is the status yoga answers with (e.g. 400 for a request error): it survives the rewrap.
    extensions: {
      ...(error.extensions.http ? { http: error.extensions.http } : {}),
      ...extensions,
      code: extensions.code ?? 'INTERNAL_SERVER_ERROR',
    },
  });
}

/** Keeps the error's own code; a missing one is filled in. */
function withCode(error: GraphQLError, fallback: string): GraphQLError {
  if (typeof error.extensions.code === 'string') return error;
  return rewrap(error, error.message, { ...error.extensions, code: fallback });
}
