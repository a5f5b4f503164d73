/**
 * A parameter sweep over the GraphQL API: starts a grid of runs (graphs × config overrides ×
 * seeds) with `startEval`, follows each over graphql-ws with `runProgress`, and prints a
 * comparison table when they have all ended.
 *
 *   node --import tsx examples/sweep.ts --graph gridnav_planner \
 *     --grid agent.epsilon=0,0.1,0.3 --seeds 0,1 --episodes 20 --workers 2
 *
 * Options:
 *   --url URL           GraphQL endpoint (default http://127.0.0.1:4000/graphql)
 *   --graph NAME        a graph to evaluate; repeat for several
 *   --grid node.key=v1,v2,…   one axis of the grid (values parsed as JSON when they can be); repeat
 *   --seeds 0,1,2       run seeds (default 0)
 *   --episodes N        episodes per run (default 10)
 *   --workers K         workers per run (default 1)
 *   --metrics a,b       metrics to compare (default: every metric the runs report)
 *   --token T           API token (default $EVAL_API_TOKEN)
 *   --json              print the results as JSON instead of tables
 *
 * Exit status: 0 when every run COMPLETED, 1 otherwise, 2 for bad arguments or a refused start.
 */
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

interface Metric {
  name: string;
  mean: number;
  stderr: number | null;
  count: number;
}

interface RunState {
  id: string;
  status: string;
  seq: number;
  episodesDone: number;
  episodeCount: number;
  aggregateMetrics: Metric[];
  error: { code: string; message: string } | null;
}

interface Cell {
  graph: string;
  overrides: Record<string, Record<string, unknown>>;
  label: string;
  seed: number;
  runId?: string;
  final?: RunState;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'ABORTED']);

const START = `mutation Start($input: StartEvalInput!) { startEval(input: $input) { runId status } }`;
const PROGRESS = `subscription Follow($id: ID!) {
  runProgress(id: $id) { id status seq episodesDone episodeCount aggregateMetrics { name mean stderr count } error { code message } }
}`;

function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** `agent.epsilon=0,0.1` → { node: 'agent', key: 'epsilon', values: [0, 0.1] } */
function parseAxis(flag: string): { node: string; key: string; values: unknown[] } {
  const m = /^([^.=]+)\.([^=]+)=(.+)$/.exec(flag);
  if (!m) throw new Error(`--grid "${flag}": expected node.key=v1,v2,… (e.g. agent.epsilon=0,0.1)`);
  return { node: m[1]!, key: m[2]!, values: m[3]!.split(',').map(parseValue) };
}

/** Every combination of the axes, as overrides and a short label. */
function combinations(axes: Array<{ node: string; key: string; values: unknown[] }>): Array<{ overrides: Cell['overrides']; label: string }> {
  let out: Array<{ overrides: Cell['overrides']; label: string[] }> = [{ overrides: {}, label: [] }];
  for (const axis of axes) {
    out = out.flatMap((c) =>
      axis.values.map((v) => ({
        overrides: { ...c.overrides, [axis.node]: { ...(c.overrides[axis.node] ?? {}), [axis.key]: v } },
        label: [...c.label, `${axis.node}.${axis.key}=${JSON.stringify(v)}`],
      })),
    );
  }
  return out.map((c) => ({ overrides: c.overrides, label: c.label.join(' ') || '(graph as saved)' }));
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

/** Follows a run to its end; `onChange` sees every state. */
function follow(client: Client, runId: string, onChange: (s: RunState) => void): Promise<RunState> {
  return new Promise((resolve, reject) => {
    let last: RunState | undefined;
    client.subscribe<{ runProgress: RunState }>(
      { query: PROGRESS, variables: { id: runId } },
      {
        next: (r) => {
          if (r.errors?.length) return reject(new Error(r.errors.map((e) => e.message).join('; ')));
          last = r.data!.runProgress;
          onChange(last);
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

const fmtMetric = (m: Metric | undefined): string => (m ? `${m.mean.toFixed(3)}${m.stderr === null ? '' : ` ±${m.stderr.toFixed(3)}`}` : '–');

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
  let axes, seeds: number[], episodes: number, workers: number;
  try {
    if (graphs.length === 0) throw new Error('give at least one --graph');
    axes = (args.grid ?? []).map(parseAxis);
    seeds = args.seeds.split(',').map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n)) throw new Error(`--seeds: "${s}" is not an integer`);
      return n;
    });
    episodes = Number(args.episodes);
    workers = Number(args.workers);
    if (!Number.isInteger(episodes) || episodes < 1) throw new Error(`--episodes must be an integer ≥ 1, got "${args.episodes}"`);
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers must be an integer ≥ 1, got "${args.workers}"`);
  } catch (err) {
    process.stderr.write(`sweep: ${(err as Error).message}\n`);
    return 2;
  }

  const cells: Cell[] = graphs.flatMap((graph) => combinations(axes).flatMap((c) => seeds.map((seed) => ({ graph, ...c, seed }))));
  const token = args.token ?? process.env.EVAL_API_TOKEN;
  const client = createClient({
    url: args.url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 3,
    ...(token ? { connectionParams: { token } } : {}),
  });
  try {
    for (const cell of cells) {
      try {
        const data = await request<{ startEval: { runId: string } }>(client, START, {
          input: { graphName: cell.graph, episodeCount: episodes, workerCount: workers, seed: cell.seed, overrides: cell.overrides },
        });
        cell.runId = data.startEval.runId;
      } catch (err) {
        process.stderr.write(`sweep: ${cell.graph} ${cell.label} seed ${cell.seed} was refused: ${(err as Error).message}\n`);
        return 2;
      }
    }
    process.stderr.write(`sweep: started ${cells.length} run(s): ${cells.map((c) => c.runId).join(' ')}\n`);
    const done = new Set<string>();
    await Promise.all(
      cells.map(async (cell) => {
        cell.final = await follow(client, cell.runId!, (s) => {
          if (TERMINAL.has(s.status) && !done.has(s.id)) {
            done.add(s.id);
            process.stderr.write(`sweep: ${s.id} ${s.status} (${done.size}/${cells.length})\n`);
          }
        });
      }),
    );
  } finally {
    await client.dispose();
  }

  const names = args.metrics
    ? args.metrics.split(',')
    : [...new Set(cells.flatMap((c) => c.final!.aggregateMetrics.map((m) => m.name)))].sort();
  if (args.json) {
    process.stdout.write(JSON.stringify(cells.map((c) => ({ graph: c.graph, overrides: c.overrides, seed: c.seed, runId: c.runId, ...c.final })), null, 2) + '\n');
  } else {
    const metricOf = (c: Cell, name: string) => c.final!.aggregateMetrics.find((m) => m.name === name);
    process.stdout.write(
      table(
        ['graph', 'overrides', 'run', 'seed', 'status', 'episodes', ...names],
        cells.map((c) => [c.graph, c.label, c.runId!, String(c.seed), c.final!.status, `${c.final!.episodesDone}/${c.final!.episodeCount}`, ...names.map((n) => fmtMetric(metricOf(c, n)))]),
      ) + '\n',
    );
    if (seeds.length > 1) {
      // Across seeds: the mean of the per-run means, and their spread.
      const groups = new Map<string, Cell[]>();
      for (const c of cells) groups.set(`${c.graph}\u0000${c.label}`, [...(groups.get(`${c.graph}\u0000${c.label}`) ?? []), c]);
      const rows = [...groups.values()].map((group) => {
        const first = group[0]!;
        return [
          first.graph,
          first.label,
          String(group.length),
          ...names.map((n) => {
            const means = group.map((c) => metricOf(c, n)?.mean).filter((v): v is number => v !== undefined);
            if (means.length === 0) return '–';
            const mean = means.reduce((a, b) => a + b, 0) / means.length;
            const sd = means.length > 1 ? Math.sqrt(means.reduce((a, b) => a + (b - mean) ** 2, 0) / (means.length - 1)) : 0;
            return `${mean.toFixed(3)} sd ${sd.toFixed(3)}`;
          }),
        ];
      });
      process.stdout.write(`\nacross ${seeds.length} seeds:\n` + table(['graph', 'overrides', 'runs', ...names], rows) + '\n');
    }
  }
  return cells.every((c) => c.final!.status === 'COMPLETED') ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`sweep: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
