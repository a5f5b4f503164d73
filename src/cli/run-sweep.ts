/**
 * `evalctl run --config eval.toml --server URL` for a run file with a `sweep` table: the grid is
 * queued on the server with `startSweep` (its `seed` axis as the sweep's seeds, each
 * `overrides.<node>.<key>` axis as a grid axis), followed until every run has ended, and printed
 * as the sweep's table: each config's mean [95 % CI] and its paired difference against the
 * first config.
 */
import { parseGrid } from '../compare/sweep-grid.js';
import { RunFileError, type SweepGrid } from '../spec/run-file.js';
import type { RunInput } from '../spec/run-spec.js';
import { RemoteServer, type RemoteOptions } from './remote-run.js';
import { signalExitCode } from './signal-exit.js';
import { textTable } from './text-table.js';

/** What `startSweep` takes besides the base run. */
export interface SweepRequest {
  grid: Record<string, unknown[]>;
  seeds?: number[];
}

const OVERRIDE_AXIS = /^overrides\.([^.]+)\.(.+)$/;

/** The run file's sweep table as startSweep's grid and seeds; a RunFileError at the sweep's line for an axis it cannot vary. */
export function sweepRequestOf(sweep: SweepGrid, file: string, line: number | undefined): SweepRequest {
  const grid: Record<string, unknown[]> = {};
  let seeds: number[] | undefined;
  for (const [axis, values] of Object.entries(sweep)) {
    if (axis === 'seed') {
      if (!values.every((v) => Number.isSafeInteger(v)))
        throw new RunFileError(file, line, `"sweep.seed" must be a list of integers, got ${JSON.stringify(values)}`, 'sweep.seed');
      seeds = values as number[];
      continue;
    }
    const m = OVERRIDE_AXIS.exec(axis);
    if (!m)
      throw new RunFileError(
        file,
        line,
        `"sweep.${axis}": a sweep varies "seed" or a config value "overrides.<node>.<key>"; other fields are the same for every run (set them outside the sweep)`,
        `sweep.${axis}`,
      );
    grid[`${m[1]}.${m[2]}`] = values;
  }
  if (Object.keys(grid).length === 0)
    throw new RunFileError(
      file,
      line,
      'a sweep needs at least one config axis "overrides.<node>.<key>"; to run one config over several seeds, run it once per seed',
      'sweep',
    );
  parseGrid(grid);
  return { grid, ...(seeds ? { seeds } : {}) };
}

const START = `mutation StartSweep($base: StartEvalInput!, $grid: JSON!, $seeds: [Int!]) {
  startSweep(base: $base, grid: $grid, seeds: $seeds) { id configs { runs { id } } }
}`;

const CANCEL = 'mutation CancelSweep($id: ID!) { cancelSweep(id: $id) { id } }';

const TABLE = `query Sweep($id: ID!) {
  sweep(id: $id) {
    id status graphName metrics
    configs {
      label runs { id status }
      metrics { name aggregate { mean ci95Low ci95High } vsBaseline { meanDiff ci95Low ci95High bhSignificant } }
    }
  }
}`;

interface SweepTable {
  id: string;
  status: string;
  graphName: string;
  metrics: string[];
  configs: Array<{
    label: string;
    runs: Array<{ id: string; status: string }>;
    metrics: Array<{
      name: string;
      aggregate: { mean: number | null; ci95Low: number | null; ci95High: number | null };
      vsBaseline: { meanDiff: number | null; ci95Low: number | null; ci95High: number | null; bhSignificant: boolean } | null;
    }>;
  }>;
}

const f4 = (v: number | null | undefined): string => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(4) : '–');
const signed = (v: number | null | undefined): string =>
  typeof v === 'number' && Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(4)}` : '–';

/** The sweep's table in text: one row per config, each metric's mean [CI] and Δ against the first config (* where Benjamini–Hochberg flags it). */
export function renderSweepTable(t: SweepTable, where: string): string {
  const rows = [
    ['config', 'status', ...t.metrics.flatMap((n) => [n, `Δ ${n}`])],
    ...t.configs.map((c) => [
      c.label,
      [...new Set(c.runs.map((r) => r.status))].join(','),
      ...t.metrics.flatMap((n) => {
        const m = c.metrics.find((x) => x.name === n);
        if (!m) return ['–', '–'];
        const v = m.vsBaseline;
        return [
          `${f4(m.aggregate.mean)} [${f4(m.aggregate.ci95Low)}, ${f4(m.aggregate.ci95High)}]`,
          v ? `${signed(v.meanDiff)} [${signed(v.ci95Low)}, ${signed(v.ci95High)}]${v.bhSignificant ? ' *' : ''}` : '(baseline)',
        ];
      }),
    ]),
  ];
  return (
    [
      `sweep ${t.id} ${t.status}: ${t.graphName}, ${t.configs.length} configs × ${t.configs[0]?.runs.length ?? 0} seeds`,
      ...textTable(rows),
      'mean [95 % CI] over each config’s episodes; Δ: paired difference against the first config, * flagged by Benjamini–Hochberg at 5 %',
      `runs: ${t.configs.flatMap((c) => c.runs.map((r) => r.id)).join(' ')}`,
      `sweep: ${where}`,
    ].join('\n') + '\n'
  );
}

/** Queues the sweep, follows each of its runs to its end, prints the table; exit 0 when every run COMPLETED, 1 otherwise. Ctrl-C cancels the sweep's runs (their finished episodes are kept) and still prints the table. */
export async function runSweepRemote(input: RunInput, request: SweepRequest, opts: RemoteOptions, json: boolean): Promise<number> {
  const server = new RemoteServer(opts);
  const started = await server.gql<{ startSweep: { id: string; configs: Array<{ runs: Array<{ id: string }> }> } }>(START, {
    base: input,
    grid: request.grid,
    ...(request.seeds ? { seeds: request.seeds } : {}),
  });
  const { id } = started.startSweep;
  const runIds = started.startSweep.configs.flatMap((c) => c.runs.map((r) => r.id));
  const where = `${server.base}/#/sweeps/${encodeURIComponent(id)}`;
  if (!json) process.stderr.write(`sweep ${id}: ${runIds.length} runs of ${input.graphName} queued on ${server.base} (${where})\n`);
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(signalExitCode(signal));
    interrupted = signal;
    if (!json) process.stderr.write('\ncancelling the sweep on the server (Ctrl-C again to stop following)…\n');
    server
      .gql(CANCEL, { id })
      .catch((err: unknown) => process.stderr.write(`evalctl run: cancelling the sweep failed: ${(err as Error).message}\n`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    // Only each run's end matters here; the dashboard's sweep page shows them live.
    for (const runId of runIds) for await (const _state of server.progress(runId));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const { sweep } = await server.gql<{ sweep: SweepTable }>(TABLE, { id });
  process.stdout.write(json ? JSON.stringify(sweep, null, 2) + '\n' : renderSweepTable(sweep, where));
  if (interrupted) return signalExitCode(interrupted);
  return sweep.status === 'COMPLETED' ? 0 : 1;
}
