#!/usr/bin/env bash
# Checks, on a machine with an NVIDIA GPU (a container too), that admission sees GPU memory held
# by another process: `evalctl serve` must report vramMeasured, a run declaring more VRAM than
# is left must wait with a reason naming VRAM, and start once the memory is released.
#
# Needs: this repository built (npm ci && npm run build), Node >= 20, nvidia-smi on PATH, and
# python3 (standard library only: it allocates the memory with ctypes through the driver's own
# libcuda.so.1, so no CUDA toolkit and no torch). lspci is not needed.
#
#   bench/gpu-check.sh
#
# Environment: HOLD_FRACTION (default 0.6) of GPU 0's free memory is held; GPU_HOLDER replaces
# the python holder with any command that takes the MB to hold as its argument, prints a line
# once it holds them, and lets go when its stdin closes. Exit 0 when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "gpu-check: $*" >&2; exit 2; }
[ -f dist/main.js ] || die "dist/main.js is missing: run npm ci && npm run build first"
command -v node >/dev/null || die "node is not on PATH"
command -v nvidia-smi >/dev/null || die "nvidia-smi is not on PATH (no NVIDIA driver here?)"
nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free --format=csv >/dev/null || die "nvidia-smi fails: $(nvidia-smi 2>&1 | head -1)"

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -z "${GPU_HOLDER:-}" ]; then
  command -v python3 >/dev/null || die "python3 is not on PATH (or set GPU_HOLDER)"
  cat >"$work/hold.py" <<'PY'
# Holds N MiB on GPU 0 (nvidia-smi's order) through the CUDA driver API until stdin closes.
import ctypes, sys
mb = int(sys.argv[1])
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    sys.stderr.write(f"hold.py: cannot load the NVIDIA driver library libcuda.so.1: {e}\n")
    sys.exit(3)
def check(r, what):
    if r != 0:
        sys.stderr.write(f"hold.py: {what} failed with CUresult {r}\n")
        sys.exit(3)
check(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
ptr = ctypes.c_uint64()
cuda.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), mb * 1024 * 1024), f"cuMemAlloc of {mb} MiB")
print(f"holding {mb} MiB", flush=True)
sys.stdin.read()
cuda.cuMemFree_v2(ptr)
PY
  export GPU_HOLDER="python3 $work/hold.py"
fi

# CUDA numbers GPUs fastest first unless told otherwise; nvidia-smi by PCI bus.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export GPU_CHECK_DIR="$work" HOLD_FRACTION="${HOLD_FRACTION:-0.6}" EVAL_API_TOKEN=

node --input-type=module - <<'JS'
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';

const work = process.env.GPU_CHECK_DIR;
const fraction = Number(process.env.HOLD_FRACTION);
const failures = [];
const say = (m) => console.log(`gpu-check: ${m}`);
const check = (ok, what) => {
  say(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
  return ok;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, probe, timeoutMs) {
  const t0 = Date.now();
  for (;;) {
    const v = await probe();
    if (v) return { value: v, ms: Date.now() - t0 };
    if (Date.now() - t0 > timeoutMs) return { value: null, ms: Date.now() - t0, what };
    await sleep(100);
  }
}
const lineFrom = (proc, re, timeoutMs) =>
  new Promise((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(null), timeoutMs);
    proc.stdout.on('data', (b) => {
      out += b.toString();
      const m = re.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    proc.once('exit', () => resolve(null));
  });

// The query the scheduler makes: index, uuid, name, total, used, free (MiB).
const smi = execFileSync('nvidia-smi', ['--query-gpu=index,uuid,name,memory.total,memory.used,memory.free', '--format=csv,noheader,nounits'], { encoding: 'utf8' });
say(`nvidia-smi:\n${smi.trimEnd()}`);
const gpu0 = smi.split('\n')[0].split(',').map((s) => s.trim());
const totalSmi = smi.trim().split('\n').reduce((s, l) => s + Number(l.split(',').at(-3)), 0);

const server = spawn(process.execPath, ['dist/main.js', 'serve', '--port', '0', '--outputs', join(work, 'outputs')], { stdio: ['ignore', 'pipe', 'inherit'] });
let holder = null;
try {
  const m = await lineFrom(server, /(http:\/\/127\.0\.0\.1:\d+)/, 30_000);
  if (!m) throw new Error('evalctl serve printed no URL');
  const url = m[1];
  const gql = async (query, variables) => {
    const r = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const j = await r.json();
    if (j.errors) throw new Error(JSON.stringify(j.errors));
    return j.data;
  };
  const resources = async () => (await gql('{ resources { vramMeasured vramTotalMb vramFreeMb gpus { index name totalMb usedMb freeMb } } }')).resources;

  const before = await resources();
  say(`resources: ${JSON.stringify(before)}`);
  check(before.vramMeasured === true, 'resources.vramMeasured is true');
  check(Math.abs((before.vramTotalMb ?? 0) - totalSmi) < 1, `resources.vramTotalMb (${before.vramTotalMb}) equals nvidia-smi's total (${totalSmi})`);

  const holdMb = Math.floor(Number(gpu0.at(-1)) * fraction);
  say(`holding ${holdMb} MB on GPU 0 from another process: ${process.env.GPU_HOLDER}`);
  holder = spawn('sh', ['-c', `exec ${process.env.GPU_HOLDER} ${holdMb}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  if (!(await lineFrom(holder, /\n/, 120_000))) throw new Error('the GPU memory holder did not report holding its memory');
  const apps = execFileSync('nvidia-smi', ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], { encoding: 'utf8' });
  const attributed = apps.split('\n').some((l) => Number(l.split(',')[0]) === holder.pid);
  say(`per-process GPU memory: nvidia-smi ${attributed ? 'lists' : 'does NOT list'} the holder's pid ${holder.pid} (${attributed ? 'runs\' own VRAM is measured and calibrates' : 'a PID namespace hides it: runs\' own VRAM reads 0, reservations are held whole'})`);

  const seen = await until('the held memory', async () => {
    const r = await resources();
    return r.vramFreeMb !== null && r.vramFreeMb <= before.vramFreeMb - holdMb * 0.9 ? r : null;
  }, 20_000);
  if (!check(seen.value !== null, `admission sees the held memory (after ${seen.ms} ms)`)) throw new Error('held memory never showed');
  const freeNow = seen.value.vramFreeMb;

  const needMb = Math.min(Math.round(freeNow + 1024), Math.floor(before.vramTotalMb));
  const started = await gql('mutation S($input: StartEvalInput!) { startEval(input: $input) { runId status } }', {
    input: { graphName: 'gridnav_planner', episodeCount: 2, marginalVramMb: needMb },
  });
  const runId = started.startEval.runId;
  say(`run ${runId} declares ${needMb} MB of VRAM; ${Math.round(freeNow)} MB free`);
  // Several admission passes (one a second) must leave it queued, saying why.
  await sleep(5000);
  const q = (await gql('{ queue { runId waitingReason } }')).queue.find((e) => e.runId === runId);
  check(q !== undefined, `the run is still queued after 5 s`);
  check(/VRAM/.test(q?.waitingReason ?? ''), `its waiting reason names VRAM: "${q?.waitingReason}"`);

  holder.stdin.end();
  const t0 = Date.now();
  await new Promise((r) => holder.once('exit', r));
  holder = null;
  const running = await until('the run to start', async () => {
    const s = (await gql('query R($id: ID!) { run(id: $id) { status } }', { id: runId })).run?.status;
    return s && s !== 'QUEUED' ? s : null;
  }, 30_000);
  check(running.value !== null, `the run starts once the memory is released (${Date.now() - t0} ms after release)`);
  const done = await until('the run to finish', async () => {
    const s = (await gql('query R($id: ID!) { run(id: $id) { status } }', { id: runId })).run?.status;
    return s === 'COMPLETED' || s === 'FAILED' || s === 'ABORTED' || s === 'CANCELLED' ? s : null;
  }, 120_000);
  check(done.value === 'COMPLETED', `the run completes (${done.value})`);
} catch (err) {
  failures.push(String(err instanceof Error ? err.message : err));
  say(`FAIL ${err instanceof Error ? err.message : err}`);
} finally {
  holder?.kill('SIGKILL');
  server.kill('SIGTERM');
  await new Promise((r) => (server.exitCode !== null ? r() : server.once('exit', r)));
}
say(failures.length === 0 ? 'PASS' : `${failures.length} check(s) failed`);
process.exit(failures.length === 0 ? 0 : 1);
JS
