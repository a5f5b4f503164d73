#!/usr/bin/env python3
"""A nodeset host in Python (standard library only) speaking the host protocol.

env_corridor: a 1-D corridor. The agent starts at 0 and must reach the goal cell; each
episode's length comes from (dataset, split, episode index). `step` applies the previous
iteration's action ("left", "right" or "stay"); with config `slip` > 0 a move fails with that
probability, drawn from a generator seeded by the call context (never the clock).
`greedy` is a trivial agent that walks towards the goal.

See docs/host-protocol.md for the protocol and README.md here for how to plug it in.
"""

import hmac
import json
import os
import random
import signal
import socket
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as f:
    MANIFEST = json.load(f)

TAG = os.environ.get("EVAL_HOST_TAG") or None
# The secret callers must present (Authorization: Bearer ...), out of the environment at once
# so nothing this host starts inherits it. Started by hand without one, the host is open.
SECRET = os.environ.pop("EVAL_HOST_SECRET", "")

DATASETS = {"corridor": {"train": 20, "val": 10}, "long_corridor": {"test": 5}}
FIELDS = MANIFEST["panel"]["fields"]
ACTIONS = MANIFEST["panel"]["actions"]
MOVES = {"left": -1, "right": 1, "stay": 0}


class BadRequest(Exception):
    """A request the caller got wrong: answered 400 (or `status`) with the message."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------ the env


def corridor_length(dataset, split, index):
    h = zlib.crc32(f"{dataset}/{split}/{index}".encode())
    base = 12 if dataset == "long_corridor" else 4
    return base + h % 9


def options(field, values):
    if field == "dataset":
        return list(DATASETS)
    if field == "split":
        return list(DATASETS.get(values.get("dataset"), {}))
    if field == "episode":
        n = DATASETS.get(values.get("dataset"), {}).get(values.get("split"), 0)
        return list(range(n))
    return []


lock = threading.Lock()
panel_values = {}
episodes = {}  # episodeKey -> state


def reset_field(field):
    before = {f["name"]: panel_values[f["name"]] for f in FIELDS[: FIELDS.index(field)] if f["name"] in panel_values}
    allowed = options(field["name"], before)
    default = field.get("default")
    match = [o for o in allowed if str(o) == str(default)] if default is not None else []
    if match:
        panel_values[field["name"]] = match[0]
    elif allowed:
        panel_values[field["name"]] = allowed[0]
    else:
        panel_values.pop(field["name"], None)


def panel_state():
    opts = {}
    for i, field in enumerate(FIELDS):
        before = {f["name"]: panel_values[f["name"]] for f in FIELDS[:i] if f["name"] in panel_values}
        opts[field["name"]] = options(field["name"], before)
    return {"values": dict(panel_values), "options": opts}


def set_field(name, value):
    field = next((f for f in FIELDS if f["name"] == name), None)
    if field is None:
        raise BadRequest(f"unknown panel field {json.dumps(name)}; fields: {', '.join(f['name'] for f in FIELDS)}")
    i = FIELDS.index(field)
    before = {f["name"]: panel_values[f["name"]] for f in FIELDS[:i] if f["name"] in panel_values}
    allowed = options(name, before)
    match = [o for o in allowed if str(o) == str(value)]
    if not match:
        raise BadRequest(f"bad value {json.dumps(value)} for panel field \"{name}\"; allowed: {', '.join(json.dumps(o) for o in allowed)}")
    panel_values[name] = match[0]
    changed = {name}
    for f in FIELDS:
        if any(d in changed for d in f.get("dependsOn", [])):
            changed.add(f["name"])
            reset_field(f)
    return panel_state()


def new_episode(values):
    dataset, split, index = values["dataset"], values["split"], values["episode"]
    length = corridor_length(dataset, split, index)
    return {
        "id": f"{dataset}/{split}/{index}",
        "position": 0,
        "goal": length,
        "moves": 0,
        "budget": 3 * length,
    }


def load(episode_key):
    ep = new_episode(panel_values)
    episodes[episode_key] = ep
    return {
        "episodeId": ep["id"],
        "scene": f"corridor of {ep['goal']} cells",
        "instruction": "walk to the end of the corridor",
        "task": panel_values["dataset"],
        "stepBudget": ep["budget"],
    }


def observation(ep):
    return {"position": ep["position"], "goal": ep["goal"]}


def step(inputs, config, ctx):
    key = ctx["episodeKey"]
    ep = episodes.get(key)
    if ep is None:
        # No panel load for this key (e.g. a graph run without the panel): the current selection.
        ep = episodes[key] = new_episode(panel_values)
    action = inputs.get("action")
    if action is not None:
        if action not in MOVES:
            raise ValueError(f"unknown action {json.dumps(action)}; actions: {', '.join(MOVES)}")
        slip = float(config.get("slip", 0))
        rng = random.Random(ctx["seed"] * 1_000_003 + ctx["step"])
        if not (slip > 0 and rng.random() < slip):
            ep["position"] = max(0, ep["position"] + MOVES[action])
        ep["moves"] += 1
    at_goal = ep["position"] == ep["goal"]
    return {
        "observation": observation(ep),
        "metrics": {"success": 1 if at_goal else 0, "steps": ep["moves"], "distance": ep["goal"] - ep["position"]},
        "done": at_goal,
    }


def greedy(inputs, config, ctx):
    obs = inputs["observation"]
    if obs["position"] < obs["goal"]:
        return {"action": "right"}
    if obs["position"] > obs["goal"]:
        return {"action": "left"}
    return {"action": "stay"}


FUNCTIONS = {"step": step, "greedy": greedy}


# ------------------------------------------------------------------ the protocol


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one socket serves many calls
    wbufsize = -1  # buffered: headers and body leave in one write when the request is done

    def setup(self):
        super().setup()
        # No Nagle delay: an answer is one small write the caller is waiting for.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):  # quiet: stderr is for problems
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_json(self):
        n = int(self.headers.get("content-length") or 0)
        if n == 0:
            return {}
        try:
            return json.loads(self.rfile.read(n))
        except ValueError as e:
            raise BadRequest(f"request body is not valid JSON: {e}")

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def route(self, method):
        path = self.path.split("?")[0]
        if SECRET and not hmac.compare_digest(self.headers.get("authorization") or "", "Bearer " + SECRET):
            self.close_connection = True
            self.send_json(401, {"error": "this host answers only its callers: send \"Authorization: Bearer <its secret>\""})
            return
        try:
            body = self.read_json() if method == "POST" else None
            status, answer = self.dispatch(method, path, body)
        except BadRequest as e:
            status, answer = e.status, {"error": str(e)}
        except Exception as e:  # a bug in the host itself
            status, answer = 500, {"error": f"{type(e).__name__}: {e}"}
        self.send_json(status, answer)

    def dispatch(self, method, path, body):
        if (method, path) == ("GET", "/manifest"):
            return 200, MANIFEST
        if (method, path) == ("GET", "/health"):
            return 200, {"ok": True, "nodeset": MANIFEST["name"], "tag": TAG, "pid": os.getpid()}
        if (method, path) == ("POST", "/call"):
            name = body.get("function")
            fn = FUNCTIONS.get(name)
            if fn is None:
                raise BadRequest(f"unknown function {json.dumps(name)} in nodeset \"{MANIFEST['name']}\"; functions: {', '.join(FUNCTIONS)}", 404)
            if not isinstance(body.get("ctx"), dict):
                raise BadRequest('"ctx" must be an object (the call context)')
            try:
                with lock:
                    return 200, {"outputs": fn(body.get("inputs") or {}, body.get("config") or {}, body["ctx"])}
            except Exception as e:  # the node failed: the caller records it
                return 200, {"error": str(e)}
        with lock:
            if (method, path) == ("GET", "/panel"):
                return 200, panel_state()
            if (method, path) == ("POST", "/panel/field"):
                return 200, set_field(body.get("field"), body.get("value"))
            if (method, path) == ("POST", "/panel/action"):
                if body.get("action") not in ACTIONS:
                    raise BadRequest(f"unknown panel action {json.dumps(body.get('action'))}; actions: {', '.join(ACTIONS)}")
                return 200, panel_state()
            if (method, path) == ("POST", "/panel/load"):
                return 200, load(require(body, "episodeKey"))
            if (method, path) == ("POST", "/evict"):
                episodes.pop(require(body, "episodeKey"), None)
                return 200, {"ok": True}
            if (method, path) == ("POST", "/callers/release"):
                require(body, "callerId")
                return 200, {"ok": True}
        raise BadRequest(f"no route {method} {path}", 404)


def require(body, name):
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"\"{name}\" must be a non-empty string, got {json.dumps(value)}")
    return value


def exit_when_parent_dies():
    """The parent holds our stdin open; EOF means it is gone (even after SIGKILL)."""
    parent = os.getppid()

    def on_eof():
        while sys.stdin.buffer.read(65536):
            pass
        os._exit(0)

    def on_reparent():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=on_eof, daemon=True).start()
    threading.Thread(target=on_reparent, daemon=True).start()


def main():
    for f in FIELDS:
        reset_field(f)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    exit_when_parent_dies()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    print("EVAL_HOST_READY " + json.dumps({"port": port, "pid": os.getpid()}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
