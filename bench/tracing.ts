/**
 * Tracing's cost per step, measured side by side in one run (`npm run bench -- tracing`):
 * - in-process: a GraphExecutor of a 3-node chain of trivial in-process nodes, µs per step, with
 *   the plain callbacks the runner passed before tracing existed, and with the runner's episode
 *   hooks (firingHook, withStepHook): no endpoint (the SDK not loaded: the hooks hand back the
 *   bare callbacks), the SDK loaded but the episode untraced, and traced (a span per step with
 *   its firings, exported to a local OTLP/HTTP sink). Each mode runs in a fresh process, the
 *   modes alternating.
 * - whole runs: `evalctl run cartpole_mlp` without an endpoint and with one (the local sink), ms
 *   per step from the episodes' wall time, the two alternating.
 * Needs a build (the whole runs use dist/). Run alone: `node --import tsx bench/tracing.ts`.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import type { FiringLogEntry, GraphSpec, NodeCallArgs, NodeOutputs, NodeTypeResolver, ResolvedNodeType } from '../src/core/types.js';
import { firingHook, withStepHook } from '../src/eval-process/episode-trace-hooks.js';
import { GraphExecutor } from '../src/graph/executor.js';
import { validateGraph } from '../src/graph/graph.js';
import { DIST_DIR } from '../src/paths.js';
import type { EpisodeSpan, RunSpan } from '../src/tracing/spans.js';
import type { RunSummary } from '../src/store/types.js';

const CHAIN = 3;
const STEPS = 2_000;
const ROUNDS = 9;
const PROCESS_ROUNDS = 3;
const RUN_ROUNDS = 3;
const RUN_EPISODES = 2;

const resolved: ResolvedNodeType = {
  type: 'bench__inc',
  nodeset: 'bench',
  fn: { name: 'inc', inputs: [{ name: 'v', optional: true }], outputs: [{ name: 'v' }] },
  invoke: async ({ inputs }: NodeCallArgs): Promise<NodeOutputs> => ({ v: ((inputs.v as number | undefined) ?? 0) + 1 }),
};
const resolver: NodeTypeResolver = { resolve: (t) => (t === resolved.type ? resolved : undefined), knownTypes: () => [resolved.type] };
const chain: GraphSpec = {
  name: 'bench_chain',
  nodes: [...Array.from({ length: CHAIN }, (_, i) => ({ id: `n${i}`, type: resolved.type })), { id: 'out', type: 'graphOut' }],
  edges: [
    ...Array.from({ length: CHAIN - 1 }, (_, i) => ({ from: `n${i}.v`, to: `n${i + 1}.v` })),
    { from: `n${CHAIN - 1}.v`, to: 'out.value' },
  ],
};
/** CPU µs this process spent since `c0` (user + system): unlike wall time, not inflated by other processes on a shared machine. */
const cpuUs = (c0: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(c0);
  return d.user + d.system;
};

/** CPU seconds of this process's reaped children and theirs (Linux: cutime + cstime of /proc/self/stat); NaN elsewhere. */
function childrenCpuSec(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[13]) + Number(rest[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** µs per step of one episode, the runner's hooks around the executor; `span` undefined is an untraced episode. */
async function timeEpisode(span: EpisodeSpan | undefined): Promise<number> {
  const graph = validateGraph(chain, resolver);
  const log: FiringLogEntry[] = [];
  span?.loopStarted();
  const exec = new GraphExecutor({
    graph,
    stepBudget: STEPS,
    context: { runSeed: 0, episodeIndex: 0, seed: 0, episodeKey: 'bench:0' },
    onFiring: firingHook((e) => void log.push(e), span),
    ...withStepHook(undefined, span),
  });
  const c0 = process.cpuUsage();
  const r = await exec.run();
  const us = cpuUs(c0) / STEPS;
  span?.end({ episodeId: 'bench/0', status: 'BUDGET_EXHAUSTED', steps: r.steps, stepBudget: STEPS, durationMs: 0, metrics: {} });
  if (r.steps !== STEPS) throw new Error(`bench graph ran wrong: ${JSON.stringify(r)}`);
  return us;
}

/** An OTLP/HTTP endpoint that takes spans and drops them (counting them). */
async function startSink(): Promise<{ url: string; spans: () => number; close: () => void }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      spans += (
        Buffer.concat(chunks)
          .toString()
          .match(/"spanId"/g) ?? []
      ).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const MODES = {
  bare: 'as before tracing (no hooks)',
  nosdk: 'no endpoint (SDK not loaded)',
  loaded: 'SDK loaded, episode not traced',
  traced: 'traced (span per step, exported)',
} as const;
type Mode = keyof typeof MODES;

/** One mode in this process: µs per step of ROUNDS episodes after a warm-up one. */
async function measureMode(mode: Mode, sinkUrl: string): Promise<number[]> {
  let run: RunSpan | undefined;
  let shutdown = async () => {};
  if (mode === 'loaded' || mode === 'traced') {
    const { OtelTracing } = await import('../src/tracing/otel-tracing.js');
    const tracing = new OtelTracing({ url: `${sinkUrl}/v1/traces`, role: 'bench' });
    run = tracing.startRun({ runId: 'bench', graph: chain.name, episodes: ROUNDS + 1, workers: 1, seed: 0 });
    shutdown = () => tracing.shutdown();
  }
  const xs: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const span = mode === 'traced' ? run?.startEpisode({ index: round, episodeIndex: round, seed: 0, workerId: 0 }) : undefined;
    const us = mode === 'bare' ? await timeBare() : await timeEpisode(span);
    if (round > 0) xs.push(us); // round 0 warms the JIT
  }
  run?.end('COMPLETED');
  await shutdown();
  return xs;
}

/** The executor with the plain callbacks the runner passed before it had tracing hooks. */
async function timeBare(): Promise<number> {
  const graph = validateGraph(chain, resolver);
  const log: FiringLogEntry[] = [];
  const exec = new GraphExecutor({
    graph,
    stepBudget: STEPS,
    context: { runSeed: 0, episodeIndex: 0, seed: 0, episodeKey: 'bench:0' },
    onFiring: (e) => void log.push(e),
  });
  const c0 = process.cpuUsage();
  const r = await exec.run();
  if (r.steps !== STEPS) throw new Error(`bench graph ran wrong: ${JSON.stringify(r)}`);
  return cpuUs(c0) / STEPS;
}

/** Each mode in a fresh process (so "not loaded" really is), the modes alternating, PROCESS_ROUNDS times. */
async function inProcess(sinkUrl: string): Promise<void> {
  const results = new Map<Mode, number[]>(Object.keys(MODES).map((m) => [m as Mode, []]));
  for (let round = 0; round < PROCESS_ROUNDS; round++) {
    for (const mode of Object.keys(MODES) as Mode[]) {
      const r = await execa(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--mode', mode, '--sink', sinkUrl]);
      results.get(mode)!.push(...(JSON.parse(r.stdout) as number[]));
    }
  }
  // On a shared machine the fastest episode is the one least disturbed by others: read "best" first.
  const best = (m: Mode) => Math.min(...results.get(m)!);
  const mid = (m: Mode) => median(results.get(m)!);
  console.log(
    `in-process: ${CHAIN}-node chain of trivial nodes × ${STEPS} steps; ${PROCESS_ROUNDS} processes × ${ROUNDS} episodes per mode, modes alternating`,
  );
  console.log(
    `${'tracing'.padEnd(36)} ${'best CPU µs/step'.padStart(16)} ${'vs before'.padStart(10)} ${'median'.padStart(8)} ${'vs before'.padStart(10)}`,
  );
  const diff = (d: number) => `${d >= 0 ? '+' : ''}${d.toFixed(2)}`.padStart(10);
  for (const mode of Object.keys(MODES) as Mode[]) {
    console.log(
      `${MODES[mode].padEnd(36)} ${best(mode).toFixed(2).padStart(16)} ${diff(best(mode) - best('bare'))} ${mid(mode).toFixed(2).padStart(8)} ${diff(mid(mode) - mid('bare'))}`,
    );
  }
}

/** A whole `evalctl run`: wall ms per step (the episodes' wall time over their steps) and CPU ms per step of the process tree. */
async function timeRun(outputs: string, endpoint: string | null): Promise<{ wall: number; cpu: number }> {
  const cpu0 = childrenCpuSec();
  const r = await execa(
    process.execPath,
    [
      join(DIST_DIR, 'main.js'),
      'run',
      'cartpole_mlp',
      '--episodes',
      String(RUN_EPISODES),
      '--workers',
      '1',
      '--outputs',
      outputs,
      '--json',
    ],
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint ?? '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' } },
  );
  const cpuSec = childrenCpuSec() - cpu0;
  const s = JSON.parse(r.stdout) as RunSummary;
  if (s.status !== 'COMPLETED') throw new Error(`bench run ended ${s.status}`);
  const ms = s.episodes.reduce((a, e) => a + e.durationMs, 0);
  const steps = s.episodes.reduce((a, e) => a + e.steps, 0);
  return { wall: ms / steps, cpu: (cpuSec * 1000) / steps };
}

async function wholeRuns(sinkUrl: string, spans: () => number): Promise<void> {
  const outputs = await mkdtemp(join(tmpdir(), 'bench-tracing-'));
  try {
    const off: Array<{ wall: number; cpu: number }> = [];
    const on: Array<{ wall: number; cpu: number }> = [];
    const before = spans();
    for (let round = 0; round < RUN_ROUNDS; round++) {
      off.push(await timeRun(outputs, null));
      on.push(await timeRun(outputs, sinkUrl));
    }
    const pct = (a: number, b: number) => `${a / b - 1 >= 0 ? '+' : ''}${((a / b - 1) * 100).toFixed(1)} %`;
    const wall = (xs: typeof off) => median(xs.map((x) => x.wall));
    const cpu = (xs: typeof off) => median(xs.map((x) => x.cpu));
    console.log(
      `\nwhole runs: evalctl run cartpole_mlp, ${RUN_EPISODES} episodes, 1 worker, median of ${RUN_ROUNDS} runs each, alternating (CPU: the whole process tree, start-up included)`,
    );
    console.log(
      `${'tracing'.padEnd(36)} ${'ms/step'.padStart(9)} ${'vs off'.padStart(9)} ${'CPU ms/step'.padStart(12)} ${'vs off'.padStart(9)}`,
    );
    for (const [name, xs] of [
      ['no endpoint (SDK not loaded)', off],
      ['endpoint set (spans exported)', on],
    ] as const) {
      console.log(
        `${name.padEnd(36)} ${wall(xs).toFixed(3).padStart(9)} ${pct(wall(xs), wall(off)).padStart(9)} ${cpu(xs).toFixed(3).padStart(12)} ${pct(cpu(xs), cpu(off)).padStart(9)}`,
      );
    }
    console.log(`spans received from the traced runs: ${spans() - before}`);
  } finally {
    await rm(outputs, { recursive: true, force: true });
  }
}

export async function benchTracing(): Promise<void> {
  const sink = await startSink();
  try {
    await inProcess(sink.url);
    await wholeRuns(sink.url, sink.spans);
  } finally {
    sink.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--mode');
  if (at > 0) {
    // A child of inProcess: one mode, its figure on stdout.
    const mode = process.argv[at + 1] as Mode;
    const sink = process.argv[process.argv.indexOf('--sink') + 1]!;
    process.stdout.write(`${JSON.stringify(await measureMode(mode, sink))}\n`);
  } else {
    await benchTracing();
  }
  process.exit(0);
}
