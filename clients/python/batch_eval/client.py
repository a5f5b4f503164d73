"""The batch-eval client: GraphQL over HTTP for requests, Server-Sent Events for live progress,
and the run's export URLs for its records. Standard library only; pandas and tqdm are used
when they are installed."""

import json
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPException

from .errors import BatchEvalError, ConnectionFailedError, error_from
from .sse import sse_events

TERMINAL = frozenset(("COMPLETED", "FAILED", "CANCELLED", "ABORTED"))
EXPORT_FORMATS = {"csv": "csv", "jsonl": "jsonl", "json": "json", "tar": "tar.gz"}

RUN_FIELDS = """
  id status seq graphName episodesDone episodeCount workerCount seed dataset split stepBudget
  createdAt startedAt finishedAt timedOut
  aggregateMetrics { name mean stderr count min max }
  statusCounts { status count }
  error { code message }
"""

PROGRESS = """subscription Follow($id: ID!) {
  runProgress(id: $id) {
    id status seq graphName episodesDone episodeCount
    aggregateMetrics { name mean stderr count }
    statusCounts { status count }
    error { code message }
  }
}"""

COMPARE = """query Compare($baseline: ID!, $candidates: [ID!]!, $metrics: [String!]) {
  compareRuns(baseline: $baseline, candidates: $candidates, metrics: $metrics) {
    metrics fdrLevel
    baseline { id graphName }
    candidates {
      candidate { id graphName }
      overlap partial note baselineEpisodes candidateEpisodes
      metrics {
        metric n binary baselineMean candidateMean meanDiff pairedStderr ci95Low ci95High
        pValue bhAdjustedP bhSignificant wins losses ties
      }
    }
  }
}"""

# Python keyword names of start()'s common arguments → the StartEvalInput field.
_FIELD_OF = {
    "episodes": "episodeCount",
    "workers": "workerCount",
    "step_budget": "stepBudget",
    "per_step_timeout_sec": "perStepTimeoutSec",
    "per_call_timeout_sec": "perCallTimeoutSec",
    "memory_budget_mb": "memoryBudgetMb",
    "marginal_vram_mb": "marginalVramMb",
    "exclusive_gpu": "exclusiveGpu",
    "via_subprocess": "viaSubprocess",
    "episode_offset": "episodeOffset",
}


def _camel(name):
    return _FIELD_OF.get(name) or re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _pandas():
    try:
        import pandas  # noqa: F401

        return pandas
    except ImportError:
        return None


def _tqdm():
    try:
        from tqdm.auto import tqdm

        return tqdm
    except ImportError:
        return None


class Client:
    """A batch-eval server.

    url: the server, e.g. "http://127.0.0.1:4000" (a trailing "/graphql" is accepted).
    token: the API token of a server started with EVAL_API_TOKEN (sent as a bearer token).
    timeout: seconds to wait for an answer (for follow(), between two reads of the stream).
    """

    def __init__(self, url, token=None, timeout=60.0):
        base = url.rstrip("/")
        if base.endswith("/graphql"):
            base = base[: -len("/graphql")]
        self.url = base
        self.token = token
        self.timeout = timeout

    # -- plumbing ---------------------------------------------------------------------------

    def _headers(self, extra=None):
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        headers.update(extra or {})
        return headers

    def _open(self, request, timeout=None):
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as err:
            body = err.read().decode("utf-8", "replace")
            try:
                errors = json.loads(body).get("errors") or []
            except ValueError:
                errors = []
            if errors:
                raise error_from(errors, status=err.code) from None
            raise BatchEvalError("HTTP %d: %s" % (err.code, body[:200]), status=err.code) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, HTTPException) as err:
            raise ConnectionFailedError("cannot reach %s: %s" % (self.url, getattr(err, "reason", err))) from None

    def graphql(self, query, variables=None, timeout=None):
        """Runs a GraphQL query or mutation; returns its `data`, raises BatchEvalError (with the server's code) on errors."""
        body = json.dumps({"query": query, "variables": variables or {}}).encode("utf-8")
        request = urllib.request.Request(
            self.url + "/graphql", data=body, method="POST", headers=self._headers({"Content-Type": "application/json"})
        )
        with self._open(request, timeout) as response:
            payload = json.loads(response.read().decode("utf-8"))
        if payload.get("errors"):
            raise error_from(payload["errors"])
        return payload["data"]

    def _run_path(self, run_id, suffix):
        return "%s/runs/%s/%s" % (self.url, urllib.parse.quote(str(run_id), safe=""), suffix)

    # -- runs -------------------------------------------------------------------------------

    def start(self, graph, episodes, workers=None, seed=None, overrides=None, dataset=None, split=None, step_budget=None, **fields):
        """Queues a run of `graph` (a graph name) and returns its id.

        Other StartEvalInput fields go as keywords, in Python or GraphQL spelling:
        priority=5, per_step_timeout_sec=10, episode_offset=100, memoryBudgetMb=4096, …
        """
        given = dict(
            episodes=episodes, workers=workers, seed=seed, overrides=overrides, dataset=dataset, split=split, step_budget=step_budget
        )
        given.update(fields)
        run_input = {"graphName": graph}
        for name, value in given.items():
            if value is not None:
                run_input[_camel(name)] = value
        # A submit that waits for room in a full queue answers only then: the read may take that long.
        wait = run_input.get("waitForRoomSec")
        timeout = max(self.timeout, float(wait) + 30) if isinstance(wait, (int, float)) else None
        data = self.graphql(
            "mutation Start($input: StartEvalInput!) { startEval(input: $input) { runId status } }", {"input": run_input}, timeout
        )
        return data["startEval"]["runId"]

    def run(self, run_id):
        """The run's state now: status, counts, aggregates, what it was started with."""
        return self.graphql("query Run($id: ID!) { run(id: $id) { %s } }" % RUN_FIELDS, {"id": run_id})["run"]

    def cancel(self, run_id):
        """Cancels a queued or running run; returns its state. CONFLICT when it already ended otherwise."""
        return self.graphql("mutation Cancel($id: ID!) { cancelRun(id: $id) { %s } }" % RUN_FIELDS, {"id": run_id})["cancelRun"]

    def progress(self, run_id, reconnects=3):
        """Yields each state of the run as the server pushes it (runProgress over SSE), from now to its end.

        A dropped connection is opened again (up to `reconnects` times in a row): the server
        sends the current state first, so the end is never missed.
        """
        body = json.dumps({"query": PROGRESS, "variables": {"id": run_id}}).encode("utf-8")
        failures = 0
        while True:
            request = urllib.request.Request(
                self.url + "/graphql",
                data=body,
                method="POST",
                headers=self._headers({"Content-Type": "application/json", "Accept": "text/event-stream"}),
            )
            ended = False
            try:
                with self._open(request) as response:
                    for event, data in sse_events(response):
                        if event == "complete":
                            return
                        if event != "next":
                            continue
                        payload = json.loads(data)
                        if payload.get("errors"):
                            raise error_from(payload["errors"])
                        state = payload["data"]["runProgress"]
                        failures = 0
                        yield state
                        if state["status"] in TERMINAL:
                            ended = True
                            return
            except (ConnectionFailedError, socket.timeout, ConnectionError, HTTPException):
                if ended:
                    return
                failures += 1
                if failures > reconnects:
                    raise
                continue
            return

    def follow(self, run_id, progress=None, on_update=None):
        """Follows the run to its end and returns its final state.

        progress: a tqdm bar of episodes done (True: always, False: never, None: when tqdm is
        installed). on_update: called with every state as it arrives.
        """
        tqdm = _tqdm() if progress is not False else None
        if progress is True and tqdm is None:
            raise ImportError("progress=True needs tqdm: pip install tqdm")
        bar = None
        last = None
        try:
            for state in self.progress(run_id):
                if tqdm is not None:
                    if bar is None:
                        bar = tqdm(total=state["episodeCount"], desc=run_id, unit="ep")
                    bar.update(state["episodesDone"] - bar.n)
                    postfix = {"status": state["status"].lower()}
                    postfix.update((m["name"], round(m["mean"], 4)) for m in state["aggregateMetrics"][:3] if m["mean"] is not None)
                    bar.set_postfix(postfix)
                if on_update is not None:
                    on_update(state)
                last = state
        finally:
            if bar is not None:
                bar.close()
        return last

    # -- results ----------------------------------------------------------------------------

    def episodes(self, run_id, as_frame=None):
        """The run's finished episodes, in index order, each its record as the run wrote it.

        as_frame: a pandas DataFrame (one row per episode, each metric a `metric.<name>`
        column, as in the CSV export) when True, or by default when pandas is installed;
        a list of dicts when False or without pandas.
        """
        records = []
        request = urllib.request.Request(self._run_path(run_id, "export.jsonl"), headers=self._headers())
        with self._open(request) as response:
            for line in response:
                if line.strip():
                    records.append(json.loads(line.decode("utf-8")))
        pandas = _pandas() if as_frame is not False else None
        if as_frame is True and pandas is None:
            raise ImportError("as_frame=True needs pandas: pip install pandas")
        if pandas is None:
            return records
        rows = []
        for r in records:
            row = {k: v for k, v in r.items() if k != "metrics"}
            for name in sorted(r.get("metrics") or {}):
                row["metric." + name] = r["metrics"][name]
            rows.append(row)
        return pandas.DataFrame(rows)

    def compare(self, baseline, candidates, metrics=None, as_frame=None):
        """Paired comparison of one or more candidate runs against a baseline (GraphQL compareRuns).

        Returns the comparison as the server answers it, or with as_frame (default: when
        pandas is installed) a DataFrame with one row per candidate × metric.
        """
        if isinstance(candidates, str):
            candidates = [candidates]
        data = self.graphql(COMPARE, {"baseline": baseline, "candidates": list(candidates), "metrics": metrics})["compareRuns"]
        pandas = _pandas() if as_frame is not False else None
        if as_frame is True and pandas is None:
            raise ImportError("as_frame=True needs pandas: pip install pandas")
        if pandas is None:
            return data
        rows = []
        for c in data["candidates"]:
            for m in c["metrics"]:
                rows.append(dict(baseline=data["baseline"]["id"], candidate=c["candidate"]["id"], overlap=c["overlap"], **m))
        return pandas.DataFrame(rows)

    def export(self, run_id, fmt="csv", path=None):
        """A run's export: "csv" or "jsonl" (its episodes), "json" (its summary), "tar" (its directory as tar.gz).

        Returns the bytes, or with `path` writes them there (streamed) and returns the path.
        """
        if fmt not in EXPORT_FORMATS:
            raise ValueError("fmt must be one of %s, got %r" % (", ".join(EXPORT_FORMATS), fmt))
        request = urllib.request.Request(self._run_path(run_id, "export." + EXPORT_FORMATS[fmt]), headers=self._headers())
        with self._open(request) as response:
            if path is None:
                return response.read()
            with open(path, "wb") as out:
                while True:
                    chunk = response.read(1 << 16)
                    if not chunk:
                        break
                    out.write(chunk)
        return path
