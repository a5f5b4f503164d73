"""Errors of the batch-eval client: each carries the server's error code (`extensions.code`)."""


class BatchEvalError(Exception):
    """The server refused a request, or answered with GraphQL errors.

    code: the server's error code (e.g. "NOT_FOUND", "BAD_USER_INPUT", "QUEUE_FULL",
    "UNAUTHENTICATED", "CONFLICT"), or None when the server could not be reached.
    status: the HTTP status, when there was one. errors: every GraphQL error as sent.
    """

    def __init__(self, message, code=None, status=None, errors=None, extensions=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.errors = errors or []
        self.extensions = extensions or {}

    def __str__(self):
        return "%s (%s)" % (self.message, self.code) if self.code else self.message


class BadInputError(BatchEvalError):
    """BAD_USER_INPUT or SPEC_INVALID: fix the request; `extensions` may name the `field`."""


class NotFoundError(BatchEvalError):
    """NOT_FOUND: no such run (or graph)."""


class QueueFullError(BatchEvalError):
    """QUEUE_FULL: the queue is at capacity; retry once a run has started."""


class UnauthenticatedError(BatchEvalError):
    """UNAUTHENTICATED: a missing or wrong token."""


class ConflictError(BatchEvalError):
    """CONFLICT: e.g. cancelling a run that already finished."""


class ConnectionFailedError(BatchEvalError):
    """The server could not be reached, or the connection broke (code None)."""


_BY_CODE = {
    "BAD_USER_INPUT": BadInputError,
    "SPEC_INVALID": BadInputError,
    "GRAPHQL_VALIDATION_FAILED": BadInputError,
    "GRAPHQL_PARSE_FAILED": BadInputError,
    "OVERRIDE_NOT_ALLOWED": BadInputError,
    "ENDPOINT_NOT_ALLOWED": BadInputError,
    "CODE_TOOLS_DISABLED": BadInputError,
    "NOT_FOUND": NotFoundError,
    "QUEUE_FULL": QueueFullError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "CONFLICT": ConflictError,
}


def error_from(errors, status=None):
    """The exception for a list of GraphQL errors: the class of the first one's code, every message joined."""
    first = errors[0] if errors else {}
    extensions = first.get("extensions") or {}
    code = extensions.get("code")
    message = "; ".join(str(e.get("message")) for e in errors) or "request failed"
    return _BY_CODE.get(code, BatchEvalError)(message, code=code, status=status, errors=errors, extensions=extensions)
