/**
 * `npm run bench -- llm-scale`: the model-backed path at scale, against the stand-in OpenAI server
 * (test/support/openai-stub-main.ts, a process of its own), every figure a whole `evalctl run`:
 * - **in flight**: qa_llm over a generated arithmetic dataset at 1, 64, 256 and 1,024 samples in
 *   flight, 200 ms per call, against the ideal (⌈samples / in flight⌉ × 200 ms). In flight is
 *   `--max-in-flight`, the llm node's endpoint limit left adaptive (it starts at the run's
 *   in-flight count). The stand-in counts the calls it held at once.
 * - **CPU per sample**: qa_llm at latency 0, one in flight, at two sizes; the difference of the
 *   whole process tree's CPU (evalctl, eval process and its threads, hosts) over the difference
 *   of samples, so start-up drops out. The stand-in's own CPU is apart.
 * - **long cheap run**: gridnav_planner (mini mazes, 2 workers, `repeats`) submitted to
 *   `evalctl serve` over GraphQL and followed by a `runProgress` subscriber: peak RSS of every
 *   process (server, eval process, hosts), summary.json's size through the run, the server's CPU,
 *   and the subscriber's update latency (receipt − summary.json's mtime) early and late.
 * Flags: `--quick` (smaller sizes, 5,000 plays), `BENCH_SERVER_PROF=DIR` (a CPU profile of the server there), `--plays N` (long run, default 100,000),
 * `--in-flight 1,64` (which levels), `--skip sweep,cpu,long`. Needs a build (`npm run bench` makes one).
 */
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { DIST_DIR, PACKAGE_ROOT } from '../src/paths.js';
import { isDone } from '../src/store/run-dir.js';
import { startStubProcess } from './stub-process.js';

const CLI = join(DIST_DIR, 'main.js');
const LATENCY_MS = 200;
const KEY = 'bench-key-not-secret';

interface Stub {
  url: string;
  proc: ResultPromise;
  options(o: Record<string, unknown>): Promise<void>;
  stats(): Promise<{ requests: number; maxInFlight: number }>;
  reset(): Promise<void>;
}

async function startStub(): Promise<Stub> {
  const { url, proc } = await startStubProcess(KEY);
  const base = url.replace(/\/v1$/, '');
  return {
    url,
    proc,
    options: async (o) => void (await fetch(`${base}/options`, { method: 'POST', body: JSON.stringify({ expectedKey: KEY, ...o }) })),
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { requests: number; maxInFlight: number },
    reset: async () => void (await fetch(`${base}/reset`, { method: 'POST' })),
  };
}

/** CPU seconds of this process's reaped children and theirs (cutime + cstime of /proc/self/stat). */
function childrenCpuSec(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[13]) + Number(rest[14])) / 100;
}

/** CPU seconds of one live process (utime + stime), NaN once it is gone. */
function processCpuSec(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100;
  } catch {
    return NaN;
  }
}

/** A workspace with a dataset `bench_arith` of `n` samples: the built-in arith test samples over and over, each with an id of its own. */
async function benchWorkspace(dir: string, n: number): Promise<string> {
  const rows = (await readFile(join(PACKAGE_ROOT, 'datasets', 'arith', 'test.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const lines = Array.from({ length: n }, (_, i) => {
    const r = JSON.parse(rows[i % rows.length]!) as Record<string, unknown>;
    return JSON.stringify({ ...r, id: `s${i}` });
  });
  await mkdir(join(dir, 'datasets', 'bench_arith'), { recursive: true });
  await writeFile(join(dir, 'datasets', 'bench_arith', 'test.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}

interface QaRun {
  wallS: number;
  /** First episode started → last finished. */
  phaseS: number;
  cpuS: number;
  stubCpuS: number;
  samples: number;
  maxInFlightAtStub: number;
}

async function qaRun(o: { stub: Stub; ws: string; outputs: string; samples: number; inFlight: number }): Promise<QaRun> {
  const args = [CLI, 'run', 'qa_llm', '--dataset', 'bench_arith', '--split', 'test', '--episodes', String(o.samples)];
  args.push('--max-in-flight', String(o.inFlight), '--set', 'llm.cache=false', '--outputs', o.outputs, '--json');
  await o.stub.reset();
  const cpu0 = childrenCpuSec();
  const stub0 = processCpuSec(o.stub.proc.pid!);
  const t0 = performance.now();
  const r = await execa(process.execPath, args, {
    reject: false,
    env: { ACTIVE_WORKSPACE_DIR: o.ws, OPENAI_BASE_URL: o.stub.url, OPENAI_API_KEY: KEY, OPENAI_MODEL: 'bench' },
  });
  const wallS = (performance.now() - t0) / 1000;
  if (r.exitCode !== 0) throw new Error(`evalctl run exited ${r.exitCode}: ${r.stderr.slice(-600)}`);
  const summary = JSON.parse(r.stdout) as { status: string; episodes: Array<{ startedAt: string; finishedAt: string; status: string }> };
  if (summary.status !== 'COMPLETED') throw new Error(`the run ended ${summary.status}`);
  const starts = summary.episodes.map((e) => Date.parse(e.startedAt));
  const ends = summary.episodes.map((e) => Date.parse(e.finishedAt));
  return {
    wallS,
    phaseS: (Math.max(...ends) - Math.min(...starts)) / 1000,
    cpuS: childrenCpuSec() - cpu0,
    stubCpuS: processCpuSec(o.stub.proc.pid!) - stub0,
    samples: summary.episodes.length,
    maxInFlightAtStub: (await o.stub.stats()).maxInFlight,
  };
}

function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  return all.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')).join('\n');
}

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/** Sizes per in-flight level (1: 32 samples, 64 and 256: 512, 1,024: 10,000), or quick ones. */
function samplesFor(inFlight: number, quick: boolean): number {
  if (quick) return inFlight === 1 ? 8 : inFlight <= 64 ? 256 : inFlight <= 256 ? 512 : 2048;
  return inFlight === 1 ? 32 : inFlight <= 256 ? 512 : 10_000;
}

async function sweep(stub: Stub, ws: string, outputs: string, levels: number[], quick: boolean): Promise<void> {
  console.log(`\nin flight at ${LATENCY_MS} ms per call (--max-in-flight; the endpoint limit adaptive)`);
  await stub.options({ latencyMs: LATENCY_MS });
  const rows: string[][] = [];
  for (const n of levels) {
    const samples = samplesFor(n, quick);
    const ideal = (Math.ceil(samples / n) * LATENCY_MS) / 1000;
    try {
      const r = await qaRun({ stub, ws, outputs, samples, inFlight: n });
      rows.push([
        String(n),
        String(samples),
        ideal.toFixed(2),
        r.wallS.toFixed(2),
        `${(r.wallS / ideal).toFixed(2)}×`,
        r.phaseS.toFixed(2),
        `${(r.phaseS / ideal).toFixed(2)}×`,
        String(r.maxInFlightAtStub),
        ((r.cpuS * 1000) / samples).toFixed(2),
      ]);
    } catch (err) {
      rows.push([
        String(n),
        String(samples),
        ideal.toFixed(2),
        'refused',
        '–',
        '–',
        '–',
        '–',
        (err as Error).message.split('\n')[0]!.slice(0, 90),
      ]);
    }
  }
  console.log(
    table(
      [
        'in flight',
        'samples',
        'ideal s',
        'wall s',
        'wall/ideal',
        'phase s',
        'phase/ideal',
        'max at stand-in',
        'CPU ms/sample, start-up incl.',
      ],
      rows,
    ),
  );
  console.log('wall: spawn of evalctl run → exit (start-up included); phase: first sample started → last finished.');
}

async function cpuPerSample(stub: Stub, ws: string, outputs: string, quick: boolean): Promise<void> {
  const [small, large] = quick ? [40, 240] : [100, 600];
  const rounds = quick ? 1 : 3;
  console.log(
    `\nCPU per sample at latency 0, one in flight (${small} and ${large} samples, ${rounds} round(s); load ${loadavg()[0]!.toFixed(1)})`,
  );
  await stub.options({ latencyMs: 0 });
  const rows: string[][] = [];
  const per: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const a = await qaRun({ stub, ws, outputs, samples: small, inFlight: 1 });
    const b = await qaRun({ stub, ws, outputs, samples: large, inFlight: 1 });
    const ms = ((b.cpuS - a.cpuS) * 1000) / (large - small);
    const wallMs = ((b.wallS - a.wallS) * 1000) / (large - small);
    const startCpu = a.cpuS - (ms * small) / 1000;
    per.push(ms);
    rows.push([
      String(i + 1),
      ms.toFixed(2),
      wallMs.toFixed(2),
      startCpu.toFixed(2),
      (((b.stubCpuS - a.stubCpuS) * 1000) / (large - small)).toFixed(2),
      a.cpuS.toFixed(2),
      b.cpuS.toFixed(2),
    ]);
  }
  console.log(
    table(
      ['round', 'CPU ms/sample (tree)', 'wall ms/sample', 'start-up CPU s', 'stand-in CPU ms/sample', `CPU s @${small}`, `CPU s @${large}`],
      rows,
    ),
  );
  console.log(`median: ${median(per).toFixed(2)} ms of CPU per sample (target ≤ 1.5 ms)`);
}

/** Every process under `root` (itself included), by pid, from /proc's children lists. */
async function tree(root: number): Promise<number[]> {
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    const pid = out[i]!;
    try {
      for (const task of await readdir(`/proc/${pid}/task`)) {
        const kids = (await readFile(`/proc/${pid}/task/${task}/children`, 'utf8')).trim();
        if (kids) out.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      // gone
    }
  }
  return out;
}

async function labelOf(pid: number): Promise<string> {
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  const joined = argv.join(' ');
  if (joined.includes(' serve')) return 'server';
  if (joined.includes('eval-process/main')) return 'eval process';
  const nodeset = argv[argv.indexOf('--nodeset-dir') + 1]?.split('/').pop();
  if (joined.includes('host-main')) return `host ${nodeset ?? '?'}`;
  return argv[0]?.split('/').pop() ?? String(pid);
}

async function vmHwmMb(pid: number): Promise<number> {
  const m = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function longRun(plays: number, dir: string): Promise<void> {
  const episodes = Math.min(1000, plays);
  const repeats = Math.ceil(plays / episodes);
  console.log(`\nlong cheap run: gridnav_planner, mini/train, ${episodes} episodes × ${repeats} repeats on 2 workers, via evalctl serve`);
  const outputs = join(dir, 'long-outputs');
  const server = execa(
    process.execPath,
    [
      ...(process.env.BENCH_SERVER_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_SERVER_PROF] : []),
      CLI,
      'serve',
      '--port',
      '0',
      '--outputs',
      outputs,
    ],
    { reject: false, buffer: false },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      server.stdout!.on('data', (c: Buffer) => {
        text += c.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(text);
        if (m) resolve(m[1]!);
      });
      void server.then(() => reject(new Error(`the server exited: ${text}`)));
    });
    const gql = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: T; errors?: Array<{ message: string }> };
      if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
      return body.data!;
    };
    const serverPid = server.pid!;
    const cpu0 = processCpuSec(serverPid);
    const t0 = performance.now();
    const { startEval } = await gql<{ startEval: { runId: string } }>(
      'mutation($input: StartEvalInput!) { startEval(input: $input) { runId } }',
      { input: { graphName: 'gridnav_planner', dataset: 'mini', split: 'train', episodeCount: episodes, repeats, workerCount: 2 } },
    );
    const runDir = join(outputs, 'eval_runs', startEval.runId);
    const summaryFile = join(runDir, 'summary.json');
    // Update latency: receipt of a state − the mtime of the summary.json that carried it.
    const latencies: Array<{ at: number; ms: number }> = [];
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const client = createClient({ url: `${url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    client.subscribe<{ runProgress: { status: string; episodesDone: number } }>(
      { query: 'subscription($id: ID!) { runProgress(id: $id) { seq status episodesDone } }', variables: { id: startEval.runId } },
      {
        next: (p) => {
          const now = Date.now();
          void stat(summaryFile)
            .then((s) => latencies.push({ at: p.data!.runProgress.episodesDone, ms: now - s.mtimeMs }))
            .catch(() => {});
          if (['COMPLETED', 'FAILED', 'CANCELLED'].includes(p.data!.runProgress.status)) finished();
        },
        error: () => finished(),
        complete: () => finished(),
      },
    );
    const peaks = new Map<string, number>();
    let summaryMax = 0;
    const sizes: Array<[number, number]> = [];
    const sample = async () => {
      for (const pid of await tree(serverPid)) {
        const label = await labelOf(pid);
        const mb = await vmHwmMb(pid);
        if (Number.isFinite(mb)) peaks.set(label, Math.max(peaks.get(label) ?? 0, mb));
      }
      const size = await stat(summaryFile).then(
        (s) => s.size,
        () => 0,
      );
      summaryMax = Math.max(summaryMax, size);
      sizes.push([performance.now() - t0, size]);
    };
    let ranS = Number.NaN;
    let serverCpu = Number.NaN;
    const poll = setInterval(() => {
      void sample();
      if (Number.isNaN(ranS) && isDone(runDir)) {
        ranS = (performance.now() - t0) / 1000;
        serverCpu = processCpuSec(serverPid) - cpu0;
      }
    }, 500);
    await done;
    clearInterval(poll);
    await sample();
    const endS = (performance.now() - t0) / 1000;
    const wallS = Number.isNaN(ranS) ? endS : ranS;
    // How long after the run ended the subscriber got its last state: a server that falls behind shows here.
    const lagS = endS - wallS;
    if (Number.isNaN(serverCpu)) serverCpu = processCpuSec(serverPid) - cpu0;
    await client.dispose();
    const final = await gql<{ run: { status: string; episodesDone: number } }>('query($id: ID!) { run(id: $id) { status episodesDone } }', {
      id: startEval.runId,
    }).catch(() => null);
    console.log(
      table(
        ['process', 'peak RSS MB'],
        [...peaks].map(([k, v]) => [k, v.toFixed(0)]),
      ),
    );
    const p = (xs: number[], q: number) =>
      xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]! : NaN;
    const tenth = Math.max(1, Math.floor(latencies.length / 10));
    const early = latencies.slice(0, tenth).map((l) => l.ms);
    const late = latencies.slice(-tenth).map((l) => l.ms);
    const mid = sizes[Math.floor(sizes.length / 2)]?.[1] ?? 0;
    console.log(
      table(
        [
          'plays',
          'status',
          'run s',
          'ms/play',
          'summary.json max MB',
          'at half-time MB',
          'server CPU s',
          'updates',
          'p99 latency first 10 % ms',
          'last 10 % ms',
          'subscriber done after run s',
        ],
        [
          [
            String(final?.run.episodesDone ?? '?'),
            final?.run.status ?? '?',
            wallS.toFixed(1),
            ((wallS * 1000) / plays).toFixed(2),
            (summaryMax / 1e6).toFixed(2),
            (mid / 1e6).toFixed(2),
            serverCpu.toFixed(1),
            String(latencies.length),
            p(early, 0.99).toFixed(0),
            p(late, 0.99).toFixed(0),
            lagS.toFixed(1),
          ],
        ],
      ),
    );
    console.log(
      'run s: submit → the run is done, server CPU over that time; latency: receipt − summary.json mtime (a lower bound once the server lags).',
    );
    console.log('targets: peak RSS ≤ 400 MB per process, summary.json ≤ 1 MB throughout, late p99 ≤ 2× early.');
  } finally {
    server.kill('SIGTERM');
    await server;
  }
}

export async function benchLlmScale(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      plays: { type: 'string' },
      'in-flight': { type: 'string' },
      skip: { type: 'string', default: '' },
    },
    strict: false,
  });
  const quick = values.quick === true;
  const plays = Number(values.plays ?? (quick ? 5000 : 100_000));
  const levels = String(values['in-flight'] ?? '1,64,256,1024')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  const skip = new Set(String(values.skip).split(',').filter(Boolean));
  console.log(`llm-scale on ${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(1)}${quick ? ' (quick)' : ''}`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-llm-scale-'));
  const stub = await startStub();
  try {
    const ws = await benchWorkspace(join(dir, 'ws'), Math.max(...levels.map((n) => samplesFor(n, quick)), 600));
    const outputs = join(dir, 'outputs');
    if (!skip.has('sweep')) await sweep(stub, ws, outputs, levels, quick);
    if (!skip.has('cpu')) await cpuPerSample(stub, ws, outputs, quick);
    // Runs are not kept: the long run's disk use must not add to theirs.
    await rm(outputs, { recursive: true, force: true });
    if (!skip.has('long')) await longRun(plays, dir);
  } finally {
    stub.proc.kill('SIGTERM');
    await stub.proc;
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchLlmScale();
