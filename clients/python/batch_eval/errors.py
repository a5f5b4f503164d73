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
    """The server could not be reached, or the connection broke (code None).

    From follow() and progress(): the stream could not be opened again within `retry_for`
    seconds; the last failure is the exception's __cause__.
    """


class StreamStalledError(ConnectionFailedError):
    """The progress stream stayed open but silent (no event, not even a keep-alive) for
    `stall_timeout` seconds, and reopening it did not help within `retry_for` seconds."""


class ProtocolError(BatchEvalError):
    """The server's answer is not what the API sends: not JSON, or a field missing (code None).

    body: the start of what was received, when there was one. Usually a proxy or another
    program answering on the server's address.
    """

    def __init__(self, message, body=None, status=None):
        super().__init__(message, status=status)
        self.body = body


class FollowTimeoutError(BatchEvalError):
    """follow() or progress() reached its `deadline` before the run ended (code None).

    last: the run's last state received (None when none came); the run itself goes on.
    """

    def __init__(self, message, last=None):
        super().__init__(message)
        self.last = last


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
    errors = [e for e in errors if isinstance(e, dict)]
    first = errors[0] if errors else {}
    extensions = first.get("extensions") if isinstance(first.get("extensions"), dict) else {}
    code = extensions.get("code")
    message = "; ".join(str(e.get("message")) for e in errors) or "request failed"
    return _BY_CODE.get(code, BatchEvalError)(message, code=code, status=status, errors=errors, extensions=extensions)
