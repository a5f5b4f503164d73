/**
 * `evalctl run <graph> --episodes N [--workers K] [--seed S] [--step-budget B]
 * [--set node.key=value …] [--outputs DIR] [--json] [--dataset D] [--split S]
 * [--episode-offset O] [--per-step-timeout SEC]`: one batch through a real eval process,
 * no server needed. A live progress line on a terminal, a table of aggregates at the end;
 * `--json` prints the final summary on stdout. Exit 0 when the run finished (whatever its
 * episodes scored), 1 when it failed or was aborted, 2 for bad input (also when the eval
 * process refuses it), 130 after Ctrl-C.
 */
import { join } from 'node:path';
import { intFlag, parseCliArgs } from './args.js';
import { execa } from 'execa';
import { BadInputError } from '../errors.js';
import { initialSummary } from '../eval-process/summary-writer.js';
import { checkRunSpec } from '../eval-process/run-spec-check.js';
import { DEFAULT_OUTPUTS_DIR, EVAL_PROCESS_MAIN } from '../paths.js';
import { applyOverrides, parseSetFlags, validateGraph } from '../runtime/graph.js';
import { GraphCatalog } from '../runtime/graph-catalog.js';
import { NodesetRegistry } from '../runtime/registry.js';
import { FILES, createRunDir, isDone, readSummary, writeSpec, writeSummary } from '../store/run-dir.js';
import { describeStorage, storageCodeOfExit } from '../store/storage-fault.js';
import type { RunSpec, RunSummary } from '../store/types.js';

const USAGE =
  'usage: evalctl run <graph> --episodes N [--workers K] [--seed S] [--step-budget B] [--set node.key=value …] ' +
  '[--outputs DIR] [--json] [--dataset D] [--split S] [--episode-offset O] [--per-step-timeout SEC]';

const POLL_MS = 200;
/** A run refused for its input exits 2, like input refused before the run started. */
const BAD_INPUT_CODES = new Set(['BAD_USER_INPUT', 'GRAPH_INVALID', 'NOT_FOUND']);
/** After Ctrl-C the eval process gets this long to write its summary before it is killed. */
const CANCEL_GRACE_MS = 10_000;

export interface RunArgs {
  graphName: string;
  episodeCount: number;
  workerCount: number;
  seed: number;
  stepBudget?: number;
  perStepTimeoutSec?: number;
  overrides: Record<string, Record<string, unknown>>;
  outputsDir: string;
  json: boolean;
  dataset?: string;
  split?: string;
  episodeOffset: number;
  help: boolean;
}

/** Parses an integer flag, naming the flag and the bad value. */


export function parseRunArgs(argv: string[]): RunArgs {
  const { values, positionals } = parseCliArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      episodes: { type: 'string', short: 'n' },
      workers: { type: 'string', short: 'w' },
      seed: { type: 'string' },
      'step-budget': { type: 'string' },
      'per-step-timeout': { type: 'string' },
      set: { type: 'string', multiple: true },
      outputs: { type: 'string' },
      json: { type: 'boolean' },
      dataset: { type: 'string' },
      split: { type: 'string' },
      'episode-offset': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const help = values.help === true;
  if (help) return { help, graphName: '', episodeCount: 0, workerCount: 1, seed: 0, overrides: {}, outputsDir: '', json: false, episodeOffset: 0 };
  if (positionals.length !== 1) {
    throw new BadInputError(positionals.length === 0 ? `missing the graph name; ${USAGE}` : `expected one graph name, got ${positionals.map((p) => `"${p}"`).join(' ')}`);
  }
  const episodeCount = intFlag('episodes', values.episodes, 1);
  if (episodeCount === undefined) throw new BadInputError('--episodes N is required');
  const seed = values.seed === undefined ? 0 : Number(values.seed);
  if (values.seed !== undefined && (values.seed.trim() === '' || !Number.isSafeInteger(seed))) throw new BadInputError(`--seed must be an integer, got "${values.seed}"`);
  let perStepTimeoutSec: number | undefined;
  if (values['per-step-timeout'] !== undefined) {
    perStepTimeoutSec = Number(values['per-step-timeout']);
    if (!(perStepTimeoutSec > 0) || !Number.isFinite(perStepTimeoutSec)) throw new BadInputError(`--per-step-timeout must be a positive number of seconds, got "${values['per-step-timeout']}"`);
  }
  const stepBudget = intFlag('step-budget', values['step-budget'], 1);
  const args: RunArgs = {
    help,
    graphName: positionals[0]!,
    episodeCount,
    workerCount: intFlag('workers', values.workers, 1) ?? 1,
    seed,
    overrides: parseSetFlags(values.set ?? []),
    outputsDir: values.outputs ?? DEFAULT_OUTPUTS_DIR,
    json: values.json === true,
    episodeOffset: intFlag('episode-offset', values['episode-offset'], 0) ?? 0,
  };
  if (stepBudget !== undefined) args.stepBudget = stepBudget;
  if (perStepTimeoutSec !== undefined) args.perStepTimeoutSec = perStepTimeoutSec;
  if (values.dataset !== undefined) args.dataset = values.dataset;
  if (values.split !== undefined) args.split = values.split;
  return args;
}

/** The spec of a CLI run, checked, with the graph found, its overrides applied and validated. */
export async function specFromArgs(a: Omit<RunArgs, 'outputsDir' | 'json' | 'help'>, runId: string): Promise<RunSpec> {
  const spec: RunSpec = {
    runId,
    graphName: a.graphName,
    episodeCount: a.episodeCount,
    workerCount: a.workerCount,
    seed: a.seed,
    priority: 0,
    exclusiveGpu: false,
    overrides: a.overrides,
    episodeOffset: a.episodeOffset,
    createdAt: new Date().toISOString(),
  };
  if (a.stepBudget !== undefined) spec.stepBudget = a.stepBudget;
  if (a.perStepTimeoutSec !== undefined) spec.perStepTimeoutSec = a.perStepTimeoutSec;
  if (a.dataset !== undefined) spec.dataset = a.dataset;
  if (a.split !== undefined) spec.split = a.split;
  const ws = process.env.ACTIVE_WORKSPACE_DIR;
  if (ws) spec.activeWorkspaceDir = ws;
  checkRunSpec(spec);
  const registry = await NodesetRegistry.scan();
  validateGraph(applyOverrides(new GraphCatalog().load(a.graphName), a.overrides), registry);
  return spec;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseRunArgs(argv);
  if (args.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const probe = await specFromArgs(args, '00000000_000000');
  const { runId, dir } = createRunDir(args.outputsDir);
  const spec = { ...probe, runId };
  await writeSpec(dir, spec);
  await writeSummary(dir, { ...initialSummary(spec), seq: 1 });

  const live = !args.json && process.stderr.isTTY === true;
  if (!args.json) process.stderr.write(`run ${runId}: ${spec.graphName}, ${spec.episodeCount} episodes on ${spec.workerCount} worker(s) → ${dir}\n`);

  const child = execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir], {
    ipc: true,
    stdin: 'ignore',
    stdout: { file: join(dir, FILES.stdout), append: true },
    stderr: { file: join(dir, FILES.stderr), append: true },
    reject: false,
    cleanup: true,
    forceKillAfterDelay: false,
  });

  let interrupted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const onSigint = () => {
    if (interrupted) {
      child.kill('SIGKILL');
      return;
    }
    interrupted = true;
    if (!args.json) process.stderr.write('\ncancelling (Ctrl-C again to kill)…\n');
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), CANCEL_GRACE_MS);
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);

  const started = Date.now();
  let last: RunSummary | undefined;
  const poll = setInterval(() => {
    void readSummary(dir)
      .then((s) => {
        if (last && s.seq <= last.seq) return;
        last = s;
        if (live) process.stderr.write(`\r\x1b[2K${progressLine(s, Date.now() - started)}`);
      })
      .catch(() => {});
  }, POLL_MS);

  const result = await child;
  clearInterval(poll);
  clearTimeout(killTimer);
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigint);
  if (live) process.stderr.write('\r\x1b[2K');

  let summary: RunSummary | undefined;
  try {
    summary = await readSummary(dir);
  } catch {
    summary = last;
  }
  if (!isDone(dir) || !summary) {
    const storage = storageCodeOfExit(typeof result.exitCode === 'number' ? result.exitCode : null);
    const how = (result.signal ? `signal ${result.signal}` : `code ${result.exitCode}`) + (storage ? `: ${describeStorage(storage, dir)}` : '');
    process.stderr.write(`evalctl run: the eval process exited (${how}) without finishing run ${runId}; see ${join(dir, FILES.stderr)}\n`);
    if (args.json && summary) process.stdout.write(JSON.stringify({ ...summary, status: 'ABORTED' }, null, 2) + '\n');
    return interrupted ? 130 : 1;
  }
  if (args.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else process.stdout.write(renderSummary(summary, dir));
  if (summary.status === 'COMPLETED') return 0;
  if (summary.error) process.stderr.write(`evalctl run: run ${runId} ${summary.status}: ${summary.error.message}\n`);
  if (interrupted) return 130;
  return summary.error && BAD_INPUT_CODES.has(summary.error.code) ? 2 : 1;
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : Math.abs(v) >= 1000 ? v.toFixed(1) : v.toFixed(4));

function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** One terminal line: a bar, episodes done/total, ETA, and the running means of a few metrics. */
export function progressLine(s: RunSummary, elapsedMs: number): string {
  const width = 24;
  const frac = s.episodeCount > 0 ? s.episodesDone / s.episodeCount : 0;
  const filled = Math.round(frac * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const eta = s.episodesDone > 0 ? clock((elapsedMs / s.episodesDone) * (s.episodeCount - s.episodesDone)) : '?';
  const preferred = ['success', 'spl', 'return'];
  const metrics = [...s.aggregateMetrics].sort((a, b) => {
    const ia = preferred.indexOf(a.name);
    const ib = preferred.indexOf(b.name);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  });
  const means = metrics.slice(0, 3).map((m) => `${m.name === 'success' ? 'SR' : m.name} ${fmt(m.mean)}`);
  return [`${bar} ${s.episodesDone}/${s.episodeCount}`, `${s.status.toLowerCase()}`, `ETA ${eta}`, ...means].join(' · ');
}

/** The end-of-run table: aggregates per metric, counts per ending, where the run lives. */
export function renderSummary(s: RunSummary, dir: string): string {
  const lines: string[] = [];
  lines.push(`run ${s.runId} ${s.status}: ${s.episodesDone}/${s.episodeCount} episodes of ${s.graphName} (seed ${s.seed}, ${s.workerCount} worker(s))`);
  if (s.aggregateMetrics.length > 0) {
    const rows = [['metric', 'mean', '± stderr', 'min', 'max', 'n'], ...s.aggregateMetrics.map((m) => [m.name, fmt(m.mean), fmt(m.stderr), fmt(m.min), fmt(m.max), String(m.count)])];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const [i, r] of rows.entries()) {
      lines.push('  ' + r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
      if (i === 0) lines.push('  ' + widths.map((w) => '─'.repeat(w)).join('  '));
    }
  }
  const counts = Object.entries(s.statusCounts).map(([k, v]) => `${k} ${v}`);
  if (counts.length > 0) lines.push(`endings: ${counts.join(', ')}${s.timedOut ? ' (timeouts depend on machine speed)' : ''}`);
  lines.push(`run dir: ${dir}`);
  return lines.join('\n') + '\n';
}
