#!/usr/bin/env python3
"""Follow a batch-eval run live from a notebook or a terminal, with the Python standard library only.

It subscribes to `runProgress` over Server-Sent Events (a POST to /graphql with
`Accept: text/event-stream`), prints a line at every episode boundary and returns the final
state once the run has ended.

In a notebook cell:

    from notebook_feed import follow
    final = follow("http://127.0.0.1:4000/graphql", "20261130_101500")
    final["aggregateMetrics"]

From a shell:

    python3 examples/notebook_feed.py --url http://127.0.0.1:4000/graphql --run 20261130_101500

Exit status: 0 when the run COMPLETED, 1 when it ended otherwise (FAILED, CANCELLED,
ABORTED), 2 when the server refused the request (unknown run, bad id, wrong token).
A server started with EVAL_API_TOKEN needs the same token: --token or the environment.
"""

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

QUERY = """
subscription Follow($id: ID!) {
  runProgress(id: $id) {
    id status seq graphName episodesDone episodeCount
    aggregateMetrics { name mean stderr count }
    statusCounts { status count }
    error { code message }
  }
}
"""

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "ABORTED"}


class FeedError(Exception):
    """The server answered with GraphQL errors (e.g. NOT_FOUND) or an HTTP error."""


def sse_events(response):
    """Yields (event, data) pairs from a text/event-stream response, as they arrive."""
    event, data = "message", []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            continue  # keep-alive comment
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
    if data:
        yield event, "\n".join(data)


def subscribe(url, run_id, token=None, timeout=3600):
    """Yields each state of the run, from its state now to its terminal state."""
    body = json.dumps({"query": QUERY, "variables": {"id": run_id}}).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if token:
        headers["Authorization"] = "Bearer " + token
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        raise FeedError("HTTP %d: %s" % (err.code, err.read().decode("utf-8", "replace"))) from None
    with response:
        for event, data in sse_events(response):
            if event == "complete":
                return
            if event != "next":
                continue
            payload = json.loads(data)
            if payload.get("errors"):
                messages = ["%s (%s)" % (e.get("message"), (e.get("extensions") or {}).get("code")) for e in payload["errors"]]
                raise FeedError("; ".join(messages))
            yield payload["data"]["runProgress"]


def describe(state):
    """One line: status, episodes done, and the mean of each metric."""
    metrics = "  ".join("%s=%.3f" % (m["name"], m["mean"]) for m in state["aggregateMetrics"])
    return "[seq %d] %-9s %d/%d episodes  %s" % (
        state["seq"], state["status"], state["episodesDone"], state["episodeCount"], metrics)


def follow(url, run_id, token=None, on_update=print):
    """Follows the run to its end, calling on_update with a line at every change; returns the final state."""
    last, seen = None, None
    for state in subscribe(url, run_id, token or os.environ.get("EVAL_API_TOKEN")):
        key = (state["status"], state["episodesDone"])
        if key != seen and on_update is not None:
            on_update(describe(state))
        seen, last = key, state
        if state["status"] in TERMINAL:
            break
    return last


def main(argv=None):
    parser = argparse.ArgumentParser(description="Follow a batch-eval run live over SSE.")
    parser.add_argument("--url", default="http://127.0.0.1:4000/graphql", help="the server's GraphQL endpoint")
    parser.add_argument("--run", required=True, help="the run id, e.g. 20261130_101500")
    parser.add_argument("--token", default=None, help="API token (default: $EVAL_API_TOKEN)")
    args = parser.parse_args(argv)
    try:
        final = follow(args.url, args.run, args.token, on_update=lambda line: print(line, flush=True))
    except (FeedError, urllib.error.URLError) as err:
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
