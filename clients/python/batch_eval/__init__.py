"""Python client of the batch-eval server.

    from batch_eval import Client
    client = Client("http://127.0.0.1:4000")
    run_id = client.start("gridnav_planner", episodes=50, workers=4, seed=1)
    final = client.follow(run_id)          # live, with a tqdm bar when tqdm is installed
    df = client.episodes(run_id)           # a DataFrame with pandas, else a list of dicts
"""

from .client import TERMINAL, Client
from .errors import (
    BadInputError,
    BatchEvalError,
    ConflictError,
    ConnectionFailedError,
    FollowTimeoutError,
    NotFoundError,
    ProtocolError,
    QueueFullError,
    StreamStalledError,
    UnauthenticatedError,
)

__version__ = "0.1.0"

__all__ = [
    "Client",
    "TERMINAL",
    "BatchEvalError",
    "BadInputError",
    "ConflictError",
    "ConnectionFailedError",
    "FollowTimeoutError",
    "NotFoundError",
    "ProtocolError",
    "QueueFullError",
    "StreamStalledError",
    "UnauthenticatedError",
]
