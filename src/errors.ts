/**
 * Error classes with a machine-readable `code`. The GraphQL layer maps `code` to
 * `extensions.code`; the CLI prints `message` on one line.
 */
/**
 * Every error code, once, with whose fault it is and whether a client sees it as it is:
 * - `input`: the user's input (a flag, a field, a graph, a run id): the CLI exits 2, the server logs nothing;
 * - `request`: the request cannot be served now (queue full, no token, already finished): logged as nothing;
 * - `storage`: the disk holding the outputs refused (full, read-only, a deleted run dir);
 * - `episode`: how a run or an episode went wrong while running;
 * - `internal`: a fault of the server or of a file it wrote.
 * `public`: reaches `extensions.code` as it is; any other code is masked, or said another way.
 */
export const ERROR_CODES = {
  BAD_USER_INPUT: { kind: 'input', public: true },
  /** Reaches clients as BAD_USER_INPUT with `reason: "GRAPH_INVALID"` and the problems. */
  GRAPH_INVALID: { kind: 'input', public: false },
  NOT_FOUND: { kind: 'input', public: true },
  /** A run's spec.json that is not a valid spec (edited by hand, truncated). */
  SPEC_INVALID: { kind: 'input', public: true },
  /** A dataset file that cannot be read as samples (names the file, the line and the field). */
  DATASET_INVALID: { kind: 'input', public: true },
  /** `evalctl merge`: partials of different runs (graph, seed, shard size, episode count …). */
  MERGE_MISMATCH: { kind: 'input', public: true },
  /** `evalctl merge`: two partials hold the same episode. */
  MERGE_OVERLAP: { kind: 'input', public: true },
  /** `evalctl merge`: episodes no partial holds (or a partial that did not complete). */
  MERGE_GAP: { kind: 'input', public: true },
  QUEUE_FULL: { kind: 'request', public: true },
  /** auditRun: a nodeset's code or manifest, or a dataset file, changed since the run (the message names what). */
  AUDIT_MANIFEST_CHANGED: { kind: 'request', public: true },
  UNAUTHENTICATED: { kind: 'request', public: true },
  CONFLICT: { kind: 'request', public: true },
  /** A scorer name nobody registered (the message lists the known ones). */
  UNKNOWN_SCORER: { kind: 'input', public: true },
  /** rescoreRun: the scorer's work on the stored answers passed its time limit (a backtracking pattern); nothing was written. */
  RESCORE_TIMEOUT: { kind: 'input', public: true },
  /** A run's overrides set a config key the nodeset declares `operatorOnly` (e.g. a tool's command): the operator's graph files set it, never a run. */
  OVERRIDE_NOT_ALLOWED: { kind: 'input', public: true },
  /** A run's overrides name a model endpoint (`base_url`) the server does not know (OPENAI_BASE_URL, EVAL_LLM_ENDPOINTS). */
  ENDPOINT_NOT_ALLOWED: { kind: 'input', public: true },
  /** The run's graph offers a code-running tool (python, a command tool) and the server was not started with `--allow-code-tools`. */
  CODE_TOOLS_DISABLED: { kind: 'input', public: true },
  /** A retry of a run whose model endpoint now serves another model than the run played (the message names both). */
  MODEL_CHANGED: { kind: 'input', public: true },
  /** `retryRun`: no episode of the run ended as asked and none is missing. */
  NOTHING_TO_RETRY: { kind: 'request', public: true },
  STORAGE_FULL: { kind: 'storage', public: true },
  STORAGE_READ_ONLY: { kind: 'storage', public: true },
  RUN_DIR_MISSING: { kind: 'storage', public: false },
  HOST_ERROR: { kind: 'episode', public: false },
  HOST_DIED: { kind: 'episode', public: false },
  NODE_ERROR: { kind: 'episode', public: false },
  TIMEOUT: { kind: 'episode', public: false },
  ABORTED: { kind: 'episode', public: false },
  OUT_OF_BUDGET: { kind: 'episode', public: false },
  /** A tool that runs the model's code, on a machine where tool calls cannot be isolated (no bwrap, no unshare) and EVAL_TOOL_ISOLATION is not `none`. */
  TOOL_ISOLATION_UNAVAILABLE: { kind: 'episode', public: false },
  /** A sandboxed tool or check on a machine where the sandbox provider cannot start (bwrap missing or refused), or provider `none` without `allow_unsandboxed`. */
  SANDBOX_UNAVAILABLE: { kind: 'episode', public: false },
  /** A task environment's setup command failed in the episode's sandbox: the episode ends ERROR with the command's output. */
  SANDBOX_SETUP_FAILED: { kind: 'episode', public: false },
  /** A run's eval process sent no heartbeat for the scheduler's hung limit (stopped, or a call holding its main thread): killed, ABORTED, its finished episodes kept. */
  HUNG: { kind: 'episode', public: false },
  SUMMARY_INVALID: { kind: 'internal', public: false },
  INTERNAL_SERVER_ERROR: { kind: 'internal', public: true },
  /** `serve --redis` / `worker --redis`: Redis cannot be reached (at start or at submit). */
  REDIS_UNAVAILABLE: { kind: 'request', public: true },
  /** A run on the Redis path lost Redis while it ran: ABORTED, its committed episodes kept. */
  REDIS_LOST: { kind: 'episode', public: false },
  /** A scale-out worker got no answer from the head (network error, timeout, the head stopped). */
  HEAD_UNREACHABLE: { kind: 'request', public: false },
  /** A run on the Redis path had a shard fail for good (attempts used up, or refused): FAILED, its committed episodes kept. */
  SHARD_FAILED: { kind: 'episode', public: false },
  /** A model endpoint's answer passed the call's `max_response_bytes`: the call was abandoned, the episode ends ERROR. */
  LLM_RESPONSE_TOO_LARGE: { kind: 'episode', public: false },
  /** A model endpoint failed to connect too many times in a row: its calls fail at once (INFRA_ERROR) until a probe gets through. */
  LLM_CIRCUIT_OPEN: { kind: 'episode', public: false },
  /** A nodeset's check before the first episode (a model endpoint that does not answer) failed: the run ends FAILED at once. */
  PREFLIGHT_FAILED: { kind: 'episode', public: false },
  /** More of a run's counted plays ended INFRA_ERROR than its `maxInfraErrorRate` allows: the run ends FAILED, its records kept. */
  INFRA_ERRORS: { kind: 'episode', public: false },
} as const satisfies Record<string, { kind: 'input' | 'request' | 'storage' | 'episode' | 'internal'; public: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;
/** The codes a client may see in `extensions.code` (besides GraphQL's own request codes). */
export type PublicErrorCode = { [K in ErrorCode]: (typeof ERROR_CODES)[K]['public'] extends true ? K : never }[ErrorCode];

const info = (code: string) => (Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : undefined);
/** The user's input was wrong: fix it and try again (CLI exit 2). */
export const isInputFault = (code: string | undefined): boolean => code !== undefined && info(code)?.kind === 'input';
/** A client's fault or the request's (input or request kinds): not the server's, nothing to log. */
export const isClientFault = (code: string | undefined): boolean => {
  const kind = code === undefined ? undefined : info(code)?.kind;
  return kind === 'input' || kind === 'request';
};
/** Reaches `extensions.code` as it is. */
export const isPublicCode = (code: string): code is PublicErrorCode => info(code)?.public === true;

export class CodedError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad input from a user: a flag, a spec field, a GraphQL argument. */
export class BadInputError extends CodedError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BAD_USER_INPUT', message, options);
  }
}

/** A submitted run field that is wrong. `field` is its name in the spec (`extensions.field`); `limit` the bound it broke, if one. */
export class RunInputError extends BadInputError {
  readonly field: string;
  readonly limit: number | undefined;
  constructor(message: string, field: string, limit?: number) {
    super(message);
    this.field = field;
    this.limit = limit;
  }
}

/** A run refused by the operator's rules (operator-only keys, known endpoints, code-running tools); `field` names what was refused. */
export class RunPolicyError extends CodedError {
  readonly field: string;
  constructor(code: 'OVERRIDE_NOT_ALLOWED' | 'ENDPOINT_NOT_ALLOWED' | 'CODE_TOOLS_DISABLED', message: string, field: string) {
    super(code, message);
    this.field = field;
  }
}

/** A graph that fails validation; `problems` lists every issue found, each naming the node or edge. */
export class GraphValidationError extends CodedError {
  readonly problems: string[];
  constructor(graphName: string, problems: string[]) {
    super('GRAPH_INVALID', `graph "${graphName}" is invalid: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

export class NotFoundError extends CodedError {
  /** `detail` follows "not found" in parentheses (what there is instead). */
  constructor(what: string, options?: { cause?: unknown; detail?: string }) {
    super('NOT_FOUND', `${what} not found${options?.detail ? ` (${options.detail})` : ''}`, options);
  }
}

export class ConflictError extends CodedError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

export class QueueFullError extends CodedError {
  readonly capacity: number;
  constructor(capacity: number) {
    super('QUEUE_FULL', `the queue is full (capacity ${capacity} queued runs); retry when a run has started`);
    this.capacity = capacity;
  }
}

/** A host process answered with an error, or could not be reached. */
export class HostError extends CodedError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('HOST_ERROR', message, options);
  }
}

/** A host process exited or its connection was refused: the episode using it is CRASHED. */
export class HostDiedError extends CodedError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('HOST_DIED', message, options);
  }
}

export class OutOfBudgetError extends CodedError {
  constructor(message: string) {
    super('OUT_OF_BUDGET', message);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
