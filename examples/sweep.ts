/**
 * A parameter sweep over the GraphQL API: `startSweep` queues the grid (config overrides ×
 * seeds) of each graph as runs sharing their episodes, each run is followed over graphql-ws
 * with `runProgress`, and when they have all ended `sweep(id)` gives the table: per config
 * each metric's mean with its 95 % interval and its paired difference against the baseline
 * config (the grid's first point), `*` where Benjamini–Hochberg flags it.
 *
 *   node --import tsx examples/sweep.ts --graph gridnav_planner \
 *     --grid agent.epsilon=0.1,0.3,0.5 --seeds 0,1 --episodes 20 --workers 2
 *
 * Options:
 *   --url URL           GraphQL endpoint (default http://127.0.0.1:4000/graphql)
 *   --graph NAME        a graph to evaluate; repeat for several (one sweep each)
 *   --grid node.key=v1,v2,…   one axis of the grid (values parsed as JSON when they can be); repeat
 *   --seeds 0,1,2       run seeds (default 0); each config runs once per seed
 *   --episodes N        episodes per run (default 10)
 *   --workers K         workers per run (default 1)
 *   --step-budget B     steps per episode (default: the graph's)
 *   --metrics a,b       metrics to show (default: every metric the runs report)
 *   --token T           API token (default $EVAL_API_TOKEN)
 *   --json              print the sweeps as JSON instead of tables
 *
 * Exit status: 0 when every run COMPLETED, 1 otherwise, 2 for bad arguments or a refused start.
 */
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

interface RunState {
  id: string;
  status: string;
  error: { code: string; message: string } | null;
}

interface Interval {
  ci95Low: number | null;
  ci95High: number | null;
}

interface SweepMetric {
  name: string;
  aggregate: Interval & { mean: number; count: number };
  vsBaseline: (Interval & { meanDiff: number | null; n: number; bhSignificant: boolean }) | null;
}

interface SweepTable {
  id: string;
  status: string;
  graphName: string;
  metrics: string[];
  configs: Array<{ index: number; label: string; runs: Array<{ id: string; status: string }>; metrics: SweepMetric[] }>;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED']);

const START = `mutation Start($base: StartEvalInput!, $grid: JSON!, $seeds: [Int!]) {
  startSweep(base: $base, grid: $grid, seeds: $seeds) { id runs { id } }
}`;
const PROGRESS = `subscription Follow($id: ID!) { runProgress(id: $id) { id status error { code message } } }`;
const TABLE = `query Sweep($id: ID!) {
  sweep(id: $id) { id status graphName metrics configs { index label runs { id status }
    metrics { name aggregate { mean count ci95Low ci95High } vsBaseline { meanDiff n ci95Low ci95High bhSignificant } } } }
}`;

function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** `agent.epsilon=0.1,0.3` → ["agent.epsilon", [0.1, 0.3]] */
function parseAxis(flag: string): [string, unknown[]] {
  const m = /^([^.=]+\.[^=]+)=(.+)$/.exec(flag);
  if (!m) throw new Error(`--grid "${flag}": expected node.key=v1,v2,… (e.g. agent.epsilon=0,0.1)`);
  return [m[1]!, m[2]!.split(',').map(parseValue)];
}

function request<T>(client: Client, query: string, variables: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    let result: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> } | undefined;
    client.subscribe(
      { query, variables },
      {
        next: (r) => void (result = r as typeof result),
        error: (err) => reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
        complete: () => {
          if (result?.errors?.length) reject(new Error(result.errors.map((e) => `${e.message} (${e.extensions?.code ?? 'ERROR'})`).join('; ')));
          else resolve(result?.data as T);
        },
      },
    );
  });
}

/** Follows a run to its end. */
function follow(client: Client, runId: string): Promise<RunState> {
  return new Promise((resolve, reject) => {
    let last: RunState | undefined;
    client.subscribe<{ runProgress: RunState }>(
      { query: PROGRESS, variables: { id: runId } },
      {
        next: (r) => {
          if (r.errors?.length) return reject(new Error(r.errors.map((e) => e.message).join('; ')));
          last = r.data!.runProgress;
        },
        error: (err) => reject(err instanceof Error ? err : new Error(JSON.stringify(err))),
        complete: () => (last && TERMINAL.has(last.status) ? resolve(last) : reject(new Error(`run ${runId}: the stream ended before the run did`))),
      },
    );
  });
}

function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const f3 = (v: number | null | undefined): string => (typeof v === 'number' ? v.toFixed(3) : '?');
const signed = (v: number | null | undefined): string => (typeof v === 'number' ? `${v >= 0 ? '+' : ''}${v.toFixed(3)}` : '?');
const cell = (m: SweepMetric | undefined): string => (m ? `${f3(m.aggregate.mean)} [${f3(m.aggregate.ci95Low)}, ${f3(m.aggregate.ci95High)}]` : '–');
const diffCell = (m: SweepMetric | undefined): string =>
  !m?.vsBaseline
    ? '(baseline)'
    : `${signed(m.vsBaseline.meanDiff)} [${signed(m.vsBaseline.ci95Low)}, ${signed(m.vsBaseline.ci95High)}]${m.vsBaseline.bhSignificant ? ' *' : ''}`;

/** One row per config: its runs and their endings, then per metric the interval and the paired difference against the baseline config. */
function renderSweep(t: SweepTable, names: string[]): string {
  const rows = t.configs.map((c) => [
    c.label,
    c.runs.map((r) => r.id).join(' '),
    [...new Set(c.runs.map((r) => r.status))].join(','),
    ...names.flatMap((n) => {
      const m = c.metrics.find((x) => x.name === n);
      return [cell(m), diffCell(m)];
    }),
  ]);
  return (
    `sweep ${t.id} of ${t.graphName} (${t.status}): mean [95 % CI], and the paired difference against the first config; * = flagged by Benjamini–Hochberg at 5 %\n` +
    table(['config', 'runs', 'status', ...names.flatMap((n) => [n, `Δ ${n}`])], rows)
  );
}

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      strict: true,
      options: {
        url: { type: 'string', default: 'http://127.0.0.1:4000/graphql' },
        graph: { type: 'string', multiple: true },
        grid: { type: 'string', multiple: true },
        seeds: { type: 'string', default: '0' },
        episodes: { type: 'string', default: '10' },
        workers: { type: 'string', default: '1' },
        'step-budget': { type: 'string' },
        metrics: { type: 'string' },
        token: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`sweep: ${(err as Error).message}\n`);
    return 2;
  }
  const graphs = args.graph ?? [];
  let grid: Record<string, unknown[]>, seeds: number[], episodes: number, workers: number, stepBudget: number | undefined;
  try {
    if (graphs.length === 0) throw new Error('give at least one --graph');
    if (!args.grid?.length) throw new Error('give at least one --grid node.key=v1,v2,…');
    grid = Object.fromEntries(args.grid.map(parseAxis));
    seeds = args.seeds.split(',').map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n)) throw new Error(`--seeds: "${s}" is not an integer`);
      return n;
    });
    episodes = Number(args.episodes);
    workers = Number(args.workers);
    stepBudget = args['step-budget'] === undefined ? undefined : Number(args['step-budget']);
    if (!Number.isInteger(episodes) || episodes < 1) throw new Error(`--episodes must be an integer ≥ 1, got "${args.episodes}"`);
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers must be an integer ≥ 1, got "${args.workers}"`);
    if (stepBudget !== undefined && (!Number.isInteger(stepBudget) || stepBudget < 1))
      throw new Error(`--step-budget must be an integer ≥ 1, got "${args['step-budget']}"`);
  } catch (err) {
    process.stderr.write(`sweep: ${(err as Error).message}\n`);
    return 2;
  }

  const token = args.token ?? process.env.EVAL_API_TOKEN;
  const client = createClient({
    url: args.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 3,
    ...(token ? { connectionParams: { token } } : {}),
  });
  const tables: SweepTable[] = [];
  let allCompleted = true;
  try {
    const sweeps: Array<{ id: string; runs: Array<{ id: string }> }> = [];
    for (const graph of graphs) {
      try {
        const base = { graphName: graph, episodeCount: episodes, workerCount: workers, ...(stepBudget !== undefined ? { stepBudget } : {}) };
        const data = await request<{ startSweep: { id: string; runs: Array<{ id: string }> } }>(client, START, { base, grid, seeds });
        sweeps.push(data.startSweep);
        process.stderr.write(`sweep: ${graph}: sweep ${data.startSweep.id} queued ${data.startSweep.runs.length} run(s)\n`);
      } catch (err) {
        process.stderr.write(`sweep: ${graph} was refused: ${(err as Error).message}\n`);
        return 2;
      }
    }
    const runs = sweeps.flatMap((s) => s.runs);
    let done = 0;
    await Promise.all(
      runs.map(async (r) => {
        const final = await follow(client, r.id);
        if (final.status !== 'COMPLETED') allCompleted = false;
        process.stderr.write(`sweep: ${final.id} ${final.status}${final.error ? ` (${final.error.code})` : ''} (${++done}/${runs.length})\n`);
      }),
    );
    for (const s of sweeps) tables.push((await request<{ sweep: SweepTable }>(client, TABLE, { id: s.id })).sweep);
  } finally {
    await client.dispose();
  }

  if (args.json) process.stdout.write(JSON.stringify(tables, null, 2) + '\n');
  else {
    for (const t of tables) {
      const names = args.metrics ? args.metrics.split(',') : t.metrics;
      process.stdout.write(renderSweep(t, names) + '\n');
    }
  }
  return allCompleted ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`sweep: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
