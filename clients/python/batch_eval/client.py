"""The batch-eval client: GraphQL over HTTP for requests, Server-Sent Events for live progress,
and the run's export URLs for its records. Standard library only; pandas and tqdm are used
when they are installed."""

import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPException

from .errors import (
    BatchEvalError,
    ConnectionFailedError,
    FollowTimeoutError,
    ProtocolError,
    StreamStalledError,
    error_from,
)
from .sse import sse_events

TERMINAL = frozenset(("COMPLETED", "FAILED", "CANCELLED", "ABORTED"))
EXPORT_FORMATS = {"csv": "csv", "jsonl": "jsonl", "json": "json", "tar": "tar.gz"}

RUN_FIELDS = """
  id status seq graphName episodesDone episodeCount workerCount seed dataset split stepBudget
  createdAt startedAt finishedAt timedOut
  aggregateMetrics { name mean stderr count min max }
  statusCounts { status count }
  error { code message }
  concurrency { workers perWorker maxInFlight asked basis limits { name limit reason } }
  stopWhen { rule metric requirement against read low high verdict stopped { reason atEpisode planned saved fixedNPlan } }
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
    "max_in_flight": "maxInFlight",
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


def _json(text, what):
    """`text` parsed as JSON, or ProtocolError naming `what` was expected."""
    try:
        return json.loads(text)
    except ValueError:
        raise ProtocolError("%s is not JSON" % what, body=str(text)[:200]) from None


def _field(obj, name):
    """obj[name] of an answer, or ProtocolError when the answer lacks it."""
    if not isinstance(obj, dict) or name not in obj:
        raise ProtocolError("the server's answer has no field %r" % name, body=json.dumps(obj)[:200])
    return obj[name]


def _raise_errors(payload, what):
    """Raises the errors of a GraphQL answer as the server's error classes; ProtocolError when it is no GraphQL answer."""
    if not isinstance(payload, dict):
        raise ProtocolError("%s is not a GraphQL answer (a JSON object)" % what, body=json.dumps(payload)[:200])
    errors = payload.get("errors")
    if errors:
        if not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
            raise ProtocolError("%s has malformed errors" % what, body=json.dumps(payload)[:200])
        raise error_from(errors)


def _data(payload, field, what):
    """`payload["data"][field]` of a GraphQL answer: the server's errors raised as theirs, a missing field as ProtocolError."""
    _raise_errors(payload, what)
    data = payload.get("data")
    if not isinstance(data, dict) or field not in data:
        raise ProtocolError("%s has no data.%s" % (what, field), body=json.dumps(payload)[:200])
    return data[field]


# follow()/progress(): the pause before reopening a dropped stream doubles from the first to the last.
_BACKOFF_FIRST = 0.5
_BACKOFF_MAX = 15.0


class Client:
    """A batch-eval server.

    url: the server, e.g. "http://127.0.0.1:4000" (a trailing "/graphql" is accepted).
    token: the API token of a server started with EVAL_API_TOKEN (sent as a bearer token).
    timeout: seconds to wait for an answer (follow() has its own stall_timeout).
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

    def _open(self, request, timeout=None, stream=False):
        """The response to `request`; the server's refusals as its error classes. A `stream` that
        gets no answer within `timeout` raises StreamStalledError."""
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as err:
            body = err.read().decode("utf-8", "replace")
            try:
                errors = json.loads(body).get("errors") or []
            except (ValueError, AttributeError):
                errors = []
            if isinstance(errors, list) and errors:
                raise error_from(errors, status=err.code) from None
            raise BatchEvalError("HTTP %d: %s" % (err.code, body[:200]), status=err.code) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, HTTPException) as err:
            reason = getattr(err, "reason", err)
            if stream and isinstance(reason, socket.timeout):
                raise StreamStalledError("%s sent nothing for %gs" % (self.url, timeout or self.timeout)) from None
            raise ConnectionFailedError("cannot reach %s: %s" % (self.url, reason)) from None

    def graphql(self, query, variables=None, timeout=None):
        """Runs a GraphQL query or mutation; returns its `data`, raises BatchEvalError (with the server's code) on errors."""
        body = json.dumps({"query": query, "variables": variables or {}}).encode("utf-8")
        request = urllib.request.Request(
            self.url + "/graphql", data=body, method="POST", headers=self._headers({"Content-Type": "application/json"})
        )
        with self._open(request, timeout) as response:
            payload = _json(response.read().decode("utf-8", "replace"), "the answer to a GraphQL request")
        _raise_errors(payload, "the answer to a GraphQL request")
        data = payload.get("data")
        if not isinstance(data, dict):
            raise ProtocolError("the answer to a GraphQL request has no data", body=json.dumps(payload)[:200])
        return data

    def _run_path(self, run_id, suffix):
        return "%s/runs/%s/%s" % (self.url, urllib.parse.quote(str(run_id), safe=""), suffix)

    # -- runs -------------------------------------------------------------------------------

    def start(self, graph, episodes, workers=None, seed=None, overrides=None, dataset=None, split=None, step_budget=None, **fields):
        """Queues a run of `graph` (a graph name) and returns its id.

        Other StartEvalInput fields go as keywords, in Python or GraphQL spelling:
        priority=5, per_step_timeout_sec=10, episode_offset=100, memoryBudgetMb=4096, …
        stop_when={"when": "decided", "against": baseline_id, "requirements": ["spl > 0"]} stops the run early.
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
        return _field(_field(data, "startEval"), "runId")

    def run(self, run_id):
        """The run's state now: status, counts, aggregates, what it was started with."""
        return _field(self.graphql("query Run($id: ID!) { run(id: $id) { %s } }" % RUN_FIELDS, {"id": run_id}), "run")

    def cancel(self, run_id):
        """Cancels a queued or running run; returns its state. CONFLICT when it already ended otherwise."""
        return _field(self.graphql("mutation Cancel($id: ID!) { cancelRun(id: $id) { %s } }" % RUN_FIELDS, {"id": run_id}), "cancelRun")

    def progress(self, run_id, deadline=None, retry_for=120.0, stall_timeout=60.0):
        """Yields each state of the run as the server pushes it (runProgress over SSE), from now
        until a state with a terminal status (TERMINAL), which is the last one yielded.

        A stream that drops, ends before the run does, or stays silent (no event, not even the
        server's keep-alive, which comes every 12 s) for `stall_timeout` seconds is opened again,
        after a pause that doubles from 0.5 s to 15 s; the server sends the current state first,
        so the end is never missed. When no state has come for `retry_for` seconds of such
        retries, it raises ConnectionFailedError (StreamStalledError when the stream was
        silent), the last failure as its cause. `deadline`: seconds in all (None: as long as the
        run takes), past which it raises FollowTimeoutError. The server's own refusals
        (NotFoundError, UnauthenticatedError, …) and ProtocolError are raised at once.
        """
        body = json.dumps({"query": PROGRESS, "variables": {"id": run_id}}).encode("utf-8")
        end = None if deadline is None else time.monotonic() + deadline
        failing_since = None  # the first failure since the stream last brought news
        pause = _BACKOFF_FIRST
        last = None
        while True:
            failure = None
            opened = time.monotonic()
            try:
                for state in self._progress_stream(body, stall_timeout, end):
                    # A reopened stream repeats the state it had: only a changed one is news.
                    if state == last:
                        continue
                    failing_since = None
                    pause = _BACKOFF_FIRST
                    last = state
                    yield state
                    if state["status"] in TERMINAL:
                        return
                failure = ConnectionFailedError("the progress stream of run %s ended before the run did" % run_id)
            except FollowTimeoutError:
                raise FollowTimeoutError("run %s did not end within the deadline of %gs" % (run_id, deadline), last=last) from None
            except ConnectionFailedError as err:
                failure = err
            except BatchEvalError as err:
                # A proxy in front of a restarting server answers these for a while.
                if err.status not in (502, 503, 504):
                    raise
                failure = err
            now = time.monotonic()
            if end is not None and now >= end:
                raise FollowTimeoutError("run %s did not end within the deadline of %gs" % (run_id, deadline), last=last) from failure
            # A stream that served well for longer than retry_for and then dropped starts a fresh window.
            if failing_since is None or (not isinstance(failure, StreamStalledError) and now - opened >= retry_for):
                failing_since = now
            elif now - failing_since >= retry_for:
                kind = StreamStalledError if isinstance(failure, StreamStalledError) else ConnectionFailedError
                raise kind("lost the progress stream of run %s: %gs of retries brought no news (%s)" % (run_id, retry_for, failure)) from failure
            wait = min(pause, failing_since + retry_for - now)
            if end is not None:
                wait = min(wait, end - now)
            time.sleep(max(0.0, wait))
            pause = min(pause * 2, _BACKOFF_MAX)

    def _progress_stream(self, body, stall_timeout, end):
        """The states of one runProgress stream, checked; ends at the stream's end or its `complete` event."""
        timeout = stall_timeout if end is None else max(0.05, min(stall_timeout, end - time.monotonic()))
        request = urllib.request.Request(
            self.url + "/graphql",
            data=body,
            method="POST",
            headers=self._headers({"Content-Type": "application/json", "Accept": "text/event-stream"}),
        )
        # The socket timeout bounds each read: a stream silent that long is stalled.
        with self._open(request, timeout, stream=True) as response:
            if "text/event-stream" not in (response.headers.get("Content-Type") or "").lower():
                # Not a stream: a refusal in one JSON answer, or not the API at all.
                text = response.read(1 << 16).decode("utf-8", "replace")
                _raise_errors(_json(text, "the answer to a runProgress subscription"), "the answer to a runProgress subscription")
                raise ProtocolError("the answer to a runProgress subscription is not an event stream", body=text[:200])

            def lines():
                # Each line, a keep-alive too, is a moment to look at the deadline.
                for line in response:
                    if end is not None and time.monotonic() >= end:
                        raise FollowTimeoutError("the deadline passed")
                    yield line

            try:
                for event, data in sse_events(lines()):
                    if event == "complete":
                        return
                    if event != "next":
                        continue
                    state = _data(_json(data, "a runProgress event"), "runProgress", "a runProgress event")
                    if not isinstance(state, dict) or not isinstance(state.get("status"), str):
                        raise ProtocolError("a runProgress event has no status", body=data[:200])
                    yield state
            except UnicodeDecodeError:
                raise ProtocolError("the progress stream is not UTF-8 text") from None
            except socket.timeout:
                raise StreamStalledError("the progress stream was silent for %gs" % timeout) from None
            except (ConnectionError, HTTPException, OSError) as err:
                raise ConnectionFailedError("the progress stream broke: %s" % err) from None

    def follow(self, run_id, progress=None, on_update=None, deadline=None, retry_for=120.0, stall_timeout=60.0):
        """Follows the run to its end and returns its final state, whose status is one of TERMINAL.

        progress: a tqdm bar of episodes done (True: always, False: never, None: when tqdm is
        installed). on_update: called with every new state as it arrives. deadline, retry_for,
        stall_timeout: as in progress() (FollowTimeoutError, ConnectionFailedError,
        StreamStalledError); by default it waits as long as the run takes, and gives up after
        120 s of reconnecting that brings no new state.
        """
        tqdm = _tqdm() if progress is not False else None
        if progress is True and tqdm is None:
            raise ImportError("progress=True needs tqdm: pip install tqdm")
        bar = None
        last = None
        try:
            for state in self.progress(run_id, deadline=deadline, retry_for=retry_for, stall_timeout=stall_timeout):
                if tqdm is not None:
                    if bar is None:
                        bar = tqdm(total=state.get("episodeCount"), desc=run_id, unit="ep")
                    bar.update((state.get("episodesDone") or 0) - bar.n)
                    postfix = {"status": state["status"].lower()}
                    metrics = state.get("aggregateMetrics") or []
                    postfix.update((m["name"], round(m["mean"], 4)) for m in metrics[:3] if m.get("mean") is not None)
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
        a list of dicts when False or without pandas. A dataset episode's row (and dict) has
        flat `input`, `target`, `answer` and `extracted` text, each cut at 1000 characters.
        """
        records = []
        request = urllib.request.Request(self._run_path(run_id, "export.jsonl"), headers=self._headers())
        with self._open(request) as response:
            for line in response:
                if line.strip():
                    records.append(_json(line.decode("utf-8", "replace"), "a line of export.jsonl"))
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
        data = _field(self.graphql(COMPARE, {"baseline": baseline, "candidates": list(candidates), "metrics": metrics}), "compareRuns")
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
