#!/usr/bin/env python3
"""Follow a batch-eval run live from a notebook or a terminal, with the batch_eval client.

The client (clients/python, standard library only) subscribes to `runProgress` over
Server-Sent Events; this script prints a line at every episode boundary and returns the final
state once the run has ended. Install the client with `pip install ./clients/python`; run from
a checkout, this script finds it there without installing.

In a notebook cell:

    from notebook_feed import follow
    final = follow("http://127.0.0.1:4000/graphql", "20261130_101500")
    final["aggregateMetrics"]

or with the client itself:

    from batch_eval import Client
    client = Client("http://127.0.0.1:4000")
    final = client.follow("20261130_101500")      # a tqdm bar when tqdm is installed
    df = client.episodes("20261130_101500")       # a DataFrame when pandas is installed

From a shell:

    python3 examples/notebook_feed.py --url http://127.0.0.1:4000/graphql --run 20261130_101500

Exit status: 0 when the run COMPLETED, 1 when it ended otherwise (FAILED, CANCELLED,
ABORTED), 2 when the server refused the request (unknown run, bad id, wrong token).
A server started with EVAL_API_TOKEN needs the same token: --token or the environment.
"""

import argparse
import os
import sys

try:
    import batch_eval
except ImportError:  # not installed: the copy in this checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
    import batch_eval


def describe(state):
    """One line: status, episodes done, and the mean of each metric."""
    metrics = "  ".join("%s=%.3f" % (m["name"], m["mean"]) for m in state["aggregateMetrics"])
    return "[seq %d] %-9s %d/%d episodes  %s" % (
        state["seq"], state["status"], state["episodesDone"], state["episodeCount"], metrics)


def follow(url, run_id, token=None, on_update=print):
    """Follows the run to its end, calling on_update with a line at every change; returns the final state."""
    client = batch_eval.Client(url, token=token or os.environ.get("EVAL_API_TOKEN"))
    seen = []

    def update(state):
        key = (state["status"], state["episodesDone"])
        if (not seen or key != seen[-1]) and on_update is not None:
            on_update(describe(state))
        seen.append(key)

    return client.follow(run_id, progress=False, on_update=update)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Follow a batch-eval run live over SSE.")
    parser.add_argument("--url", default="http://127.0.0.1:4000/graphql", help="the server's GraphQL endpoint")
    parser.add_argument("--run", required=True, help="the run id, e.g. 20261130_101500")
    parser.add_argument("--token", default=None, help="API token (default: $EVAL_API_TOKEN)")
    args = parser.parse_args(argv)
    try:
        final = follow(args.url, args.run, args.token, on_update=lambda line: print(line, flush=True))
    except batch_eval.BatchEvalError as err:
        print("notebook_feed: %s" % err, file=sys.stderr)
        return 2
    if final is None:
        print("notebook_feed: the stream ended before any state arrived", file=sys.stderr)
        return 2
    print("final: %s" % final["status"] + (" (%s)" % final["error"]["message"] if final.get("error") else ""))
    for m in final["aggregateMetrics"]:
        stderr = "" if m["stderr"] is None else " ± %.4f" % m["stderr"]  # as many decimals as the mean
        print("  %-20s %.4f%s  (n=%d)" % (m["name"], m["mean"], stderr, m["count"]))
    return 0 if final["status"] == "COMPLETED" else 1


if __name__ == "__main__":
    sys.exit(main())
