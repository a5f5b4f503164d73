/**
 * Error classes with a machine-readable `code`. The GraphQL layer maps `code` to
 * `extensions.code`; the CLI prints `message` on one line.
 */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'QUEUE_FULL'
  | 'UNAUTHENTICATED'
  | 'CONFLICT'
  | 'INTERNAL_SERVER_ERROR'
  | 'GRAPH_INVALID'
  | 'HOST_ERROR'
  | 'HOST_DIED'
  | 'NODE_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'OUT_OF_BUDGET'
  | 'SPEC_INVALID'
  | 'SUMMARY_INVALID'
  | 'STORAGE_FULL'
  | 'STORAGE_READ_ONLY'
  | 'RUN_DIR_MISSING';

export class EvalError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad input from a user: a flag, a spec field, a GraphQL argument. */
export class BadInputError extends EvalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BAD_USER_INPUT', message, options);
  }
}

/** A graph that fails validation; `problems` lists every issue found, each naming the node or edge. */
export class GraphValidationError extends EvalError {
  readonly problems: string[];
  constructor(graphName: string, problems: string[]) {
    super('GRAPH_INVALID', `graph "${graphName}" is invalid: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

export class NotFoundError extends EvalError {
  constructor(what: string, options?: { cause?: unknown }) {
    super('NOT_FOUND', `${what} not found`, options);
  }
}

export class ConflictError extends EvalError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

export class QueueFullError extends EvalError {
  readonly capacity: number;
  constructor(capacity: number) {
    super('QUEUE_FULL', `the queue is full (capacity ${capacity} queued runs); retry when a run has started`);
    this.capacity = capacity;
  }
}

/** A host process answered with an error, or could not be reached. */
export class HostError extends EvalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('HOST_ERROR', message, options);
  }
}

/** A host process exited or its connection was refused: the episode using it is CRASHED. */
export class HostDiedError extends EvalError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('HOST_DIED', message, options);
  }
}

export class OutOfBudgetError extends EvalError {
  constructor(message: string) {
    super('OUT_OF_BUDGET', message);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
