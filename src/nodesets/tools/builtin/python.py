# python tool: reads {"code": "..."} as JSON on stdin and runs it; what it prints is the result.
# Opt-in only: the code runs with the user's rights (in the episode's working directory, with
# a clean environment, a time limit and a PID namespace of its own; no network or resource limits).
import json
import sys

args = json.loads(sys.stdin.read() or "{}")
code = args.get("code") if isinstance(args, dict) else None
if not isinstance(code, str) or not code.strip():
    sys.stderr.write('argument "code" must be a non-empty string\n')
    sys.exit(1)
sys.stdin = open("/dev/null")
exec(compile(code, "<tool>", "exec"), {"__name__": "__main__"})
