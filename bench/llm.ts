/**
 * llm benchmarks against the stand-in OpenAI server (test/support/openai-stub-main.ts, its own
 * process):
 * - 64 concurrent episodes: the test graph llm_fixture_qa (one model call per episode) over
 *   256 episodes on 64 workers in a real eval process, the server answering each call after
 *   200 ms. Throughput (calls/s over the episode phase) against the ideal for 64-way concurrency
 *   (64 / 0.2 s = 320 calls/s; target ≥ 0.8 ×), five runs one after another and the median taken
 *   (one run's phase is ~1 s, and on a shared machine one run reads anywhere in ±5 %), and the
 *   eval process's peak RSS (target ≤ 300 MB);
 *   then 1024 episodes the same way, with the rate between the first round's end and the last
 *   round's start (every worker busy; one call per episode, so episodes/s are calls/s);
 * - the same calls through the `llm__chat` handler alone (no runner, no hosts), 64 lanes;
 * - the overhead of the `llm__chat` handler over a bare `openai` client call to the same server
 *   with no latency (p50 of interleaved sequential calls; target ≤ 1 ms), against the client with
 *   its default fetch and with the node's own (httpFetch);
 * - what creating a small file costs on the outputs disk (`TMPDIR` chooses it), since every
 *   episode creates a few.
 * Needs a build (the eval process and hosts run from dist/). Run alone: `node --import tsx bench/llm.ts`.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import OpenAI from 'openai';
import { startStubProcess } from './stub-process.js';
import { chat, evictChat } from '../src/nodesets/llm/chat.js';
import { httpFetch } from '../src/nodesets/llm/http-fetch.js';
import { EVAL_PROCESS_MAIN, PACKAGE_ROOT } from '../src/paths.js';
import { runSpecSchema } from '../src/spec/run-spec.js';
import { createRunDir, readSummary, writeSpec } from '../src/store/run-dir.js';

const WORKERS = 64;
const EPISODES = 256;
const LONG_EPISODES = 1024;
/** Runs of the 256-episode measurement; the median is the figure. */
const REPEATS = 5;
const LATENCY_MS = 200;
const TARGET_EFFICIENCY = 0.8;
const TARGET_RSS_MB = 300;
const TARGET_OVERHEAD_MS = 1;
const OVERHEAD_ROUNDS = 400;
const KEY = 'bench-key-not-secret';
const WORKSPACE = join(PACKAGE_ROOT, 'test', 'fixtures', 'llm-workspace');

const setOptions = (url: string, o: Record<string, unknown>) =>
  fetch(url.replace(/\/v1$/, '/options'), { method: 'POST', body: JSON.stringify({ expectedKey: KEY, ...o }) });

/** VmHWM (peak resident set) of a process, in MB, or NaN once it is gone. */
async function peakRssMb(pid: number): Promise<number> {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function throughput(
  outputs: string,
  url: string,
  episodes = EPISODES,
): Promise<{ phaseS: number; calls: number; rssMb: number; status: string; episodeMs: number; callMs: number; sustainedPerS: number }> {
  const { runId, dir } = createRunDir(outputs);
  const spec = runSpecSchema.parse({
    runId,
    createdAt: new Date().toISOString(),
    graphName: 'llm_fixture_qa',
    episodeCount: episodes,
    workerCount: WORKERS,
    activeWorkspaceDir: WORKSPACE,
    overrides: { llm: { base_url: url, cache: false, max_concurrency: WORKERS } },
  });
  await writeSpec(dir, spec);
  const child = execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir], {
    stdin: 'ignore',
    reject: false,
    env: { OPENAI_API_KEY: KEY, EVAL_LLM_CACHE_DIR: join(outputs, 'llm-cache') },
  });
  let rssMb = 0;
  const poll = setInterval(() => {
    void peakRssMb(child.pid!).then((v) => {
      if (Number.isFinite(v)) rssMb = Math.max(rssMb, v);
    });
  }, 50);
  const r = await child;
  clearInterval(poll);
  if (r.exitCode !== 0) throw new Error(`eval process exited ${r.exitCode ?? r.signal}: ${r.stderr}`);
  const summary = await readSummary(dir);
  const starts = summary.episodes.map((e) => Date.parse(e.startedAt));
  const ends = summary.episodes.map((e) => Date.parse(e.finishedAt));
  const calls = summary.episodes.reduce((s, e) => s + Number(e.metrics.llm_calls ?? 0), 0);
  // Episodes finished per second between the first round's last finish and the last round's first: the rate once every worker is busy.
  const finishes = [...ends].sort((a, b) => a - b);
  const from = WORKERS - 1;
  const to = finishes.length - WORKERS;
  const sustainedPerS = to > from ? ((to - from) * 1000) / (finishes[to]! - finishes[from]!) : NaN;
  const mean = (f: (e: (typeof summary.episodes)[number]) => number) =>
    summary.episodes.reduce((s, e) => s + f(e), 0) / summary.episodes.length;
  return {
    phaseS: (Math.max(...ends) - Math.min(...starts)) / 1000,
    calls,
    rssMb,
    status: JSON.stringify(summary.statusCounts),
    episodeMs: mean((e) => e.durationMs),
    callMs: mean((e) => Number(e.metrics.llm_latency_ms ?? 0)),
    sustainedPerS,
  };
}

/** The node alone, no runner or hosts: EPISODES calls in WORKERS concurrent lanes, against LATENCY_MS per call. */
async function nodeAlone(url: string): Promise<number> {
  process.env.BENCH_LLM_API_KEY = KEY;
  const config = { base_url: url, model: 'bench', api_key_env: 'BENCH_LLM_API_KEY', cache: false, max_concurrency: WORKERS };
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, lane) => {
      for (let i = lane; i < EPISODES; i += WORKERS) {
        const episodeKey = `alone:${i}`;
        const messages = [{ role: 'user', content: `What is ${i} + 7?` }];
        await chat({ inputs: { messages }, config, ctx: { runSeed: 0, episodeIndex: i, seed: i, step: 0, episodeKey, nodeId: 'llm' } });
        evictChat(episodeKey);
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

/** The same lanes with bare client calls: what the client, the server and the machine allow without the node. */
async function bareAlone(url: string): Promise<number> {
  const client = new OpenAI({ baseURL: url, apiKey: KEY, maxRetries: 0 });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, lane) => {
      for (let i = lane; i < EPISODES; i += WORKERS) {
        await client.chat.completions.create({
          model: 'bench',
          messages: [{ role: 'user', content: `What is ${i} + 9?` }],
          temperature: 0,
        });
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

/**
 * What creating one small file costs on the outputs disk, in ms: each episode creates about four
 * (its folder, log, record and the record's temp file), and on a disk where that is slow (seen
 * here: 0.6 ms on an ext4 folder after heavy churn, 0.01 ms on tmpfs) it shows in the floor.
 */
async function fileCreateMs(outputs: string): Promise<number> {
  const dir = join(outputs, 'create-probe');
  await mkdir(dir);
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) await writeFile(join(dir, `f${i}`), 'x');
  const ms = (performance.now() - t0) / 200;
  await rm(dir, { recursive: true, force: true });
  return ms;
}

/** The middle item by `key` (the upper one of an even count). */
const medianBy = <T>(items: T[], key: (x: T) => number): T => [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)]!;
const p50 = (v: number[]) => medianBy(v, (x) => x);
/** Model calls per second over a run's episode phase. */
const rateOf = (r: { calls: number; phaseS: number }): number => r.calls / r.phaseS;

async function overhead(url: string): Promise<{ bare: number; bareSameFetch: number; node: number }> {
  await setOptions(url, { latencyMs: 0 });
  process.env.BENCH_LLM_API_KEY = KEY;
  const client = new OpenAI({ baseURL: url, apiKey: KEY, maxRetries: 0 });
  // The client as the node configures it (its fetch on node:http): what the node adds beyond the transport.
  const sameFetch = new OpenAI({ baseURL: url, apiKey: KEY, maxRetries: 0, fetch: httpFetch });
  const config = { base_url: url, model: 'bench', api_key_env: 'BENCH_LLM_API_KEY', cache: false };
  const bare: number[] = [];
  const bareSameFetch: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < OVERHEAD_ROUNDS + 20; i++) {
    const messages = [{ role: 'user' as const, content: `What is ${i} + 1?` }];
    let t = performance.now();
    await client.chat.completions.create({ model: 'bench', messages, temperature: 0 });
    const b = performance.now() - t;
    t = performance.now();
    await sameFetch.chat.completions.create({ model: 'bench', messages, temperature: 0 });
    const bs = performance.now() - t;
    const episodeKey = `bench:${i}`;
    t = performance.now();
    await chat({ inputs: { messages }, config, ctx: { runSeed: 0, episodeIndex: i, seed: i, step: 0, episodeKey, nodeId: 'llm' } });
    const n = performance.now() - t;
    evictChat(episodeKey);
    // The first rounds warm the connection pool and the JIT.
    if (i >= 20) {
      bare.push(b);
      bareSameFetch.push(bs);
      node.push(n);
    }
  }
  return { bare: p50(bare), bareSameFetch: p50(bareSameFetch), node: p50(node) };
}

export async function benchLlm(): Promise<void> {
  if (!existsSync(EVAL_PROCESS_MAIN)) throw new Error(`${EVAL_PROCESS_MAIN} is missing: build first (npm run build:server)`);
  const outputs = await mkdtemp(join(tmpdir(), 'bench-llm-'));
  const stub = await startStubProcess(KEY);
  try {
    await setOptions(stub.url, { latencyMs: LATENCY_MS });
    const ideal = WORKERS / (LATENCY_MS / 1000);
    const runs: Array<Awaited<ReturnType<typeof throughput>>> = [];
    for (let i = 0; i < REPEATS; i++) runs.push(await throughput(outputs, stub.url));
    // The median run: its rate is the figure, and the other rows describe it.
    const t = medianBy(runs, rateOf);
    const rate = rateOf(t);
    // A run four times as long: the first round (every worker starting at once) and the last weigh less.
    const long = await throughput(outputs, stub.url, LONG_EPISODES);
    const alone = await nodeAlone(stub.url);
    const bareLanes = await bareAlone(stub.url);
    // The same run with instant answers: the floor the runner, hosts and machine put under any model latency.
    await setOptions(stub.url, { latencyMs: 0 });
    const floor = await throughput(outputs, stub.url);
    const o = await overhead(stub.url);
    const createMs = await fileCreateMs(outputs);
    const rows = [
      ['measure', 'value', 'target'],
      [`episodes (${EPISODES} on ${WORKERS} workers)`, t.status, ''],
      ['episode phase s', t.phaseS.toFixed(3), `≥ ${((EPISODES / WORKERS) * LATENCY_MS) / 1000} (ideal)`],
      ['episode phase s with 0 ms per call (floor)', floor.phaseS.toFixed(2), ''],
      ['model-attributable s (phase − floor)', (t.phaseS - floor.phaseS).toFixed(2), `ideal ${((EPISODES / WORKERS) * LATENCY_MS) / 1000}`],
      ['episode duration mean ms', t.episodeMs.toFixed(0), ''],
      ['model call latency mean ms (in the node)', t.callMs.toFixed(0), `${LATENCY_MS} + transport`],
      ['calls/s', rate.toFixed(1), `ideal ${ideal.toFixed(0)}`],
      [
        `throughput / ideal (median of ${REPEATS} runs)`,
        (rate / ideal).toFixed(3),
        `≥ ${TARGET_EFFICIENCY} ${rate / ideal >= TARGET_EFFICIENCY ? 'met' : 'NOT met'}`,
      ],
      ['  each run, in order', runs.map((r) => (rateOf(r) / ideal).toFixed(3)).join(' '), ''],
      [`throughput / ideal, ${LONG_EPISODES} episodes`, (rateOf(long) / ideal).toFixed(2), `≥ ${TARGET_EFFICIENCY}`],
      [`  of it sustained (first round's end → last round's start)`, (long.sustainedPerS / ideal).toFixed(2), `≥ ${TARGET_EFFICIENCY}`],
      [
        `llm__chat alone, ${EPISODES} calls in ${WORKERS} lanes, s`,
        alone.toFixed(2),
        `ideal ${((EPISODES / WORKERS) * LATENCY_MS) / 1000}`,
      ],
      ['llm__chat alone / ideal', (((EPISODES / WORKERS) * LATENCY_MS) / 1000 / alone).toFixed(2), `≥ ${TARGET_EFFICIENCY}`],
      [`bare client alone, same lanes, s`, bareLanes.toFixed(2), `ideal ${((EPISODES / WORKERS) * LATENCY_MS) / 1000}`],
      ['eval process peak RSS MB (largest run)', Math.max(...runs.map((r) => r.rssMb)).toFixed(0), `≤ ${TARGET_RSS_MB}`],
      ['bare client call p50 ms', o.bare.toFixed(3), ''],
      ['llm__chat handler p50 ms', o.node.toFixed(3), ''],
      ['llm node overhead p50 ms', (o.node - o.bare).toFixed(3), `≤ ${TARGET_OVERHEAD_MS}`],
      ["bare client with the node's fetch (httpFetch) p50 ms", o.bareSameFetch.toFixed(3), ''],
      ['llm node overhead over that p50 ms', (o.node - o.bareSameFetch).toFixed(3), ''],
      ['small-file create on the outputs disk ms', createMs.toFixed(3), '~4 per episode'],
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${availableParallelism()} CPU(s)`,
    );
    console.log(`\nllm__chat against the stand-in server (${LATENCY_MS} ms per call for the throughput run, 0 ms for the overhead)`);
    console.log(rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n'));
  } finally {
    stub.proc.kill('SIGTERM');
    await stub.proc;
    await rm(outputs, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchLlm().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
