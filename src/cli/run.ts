/**
 * `evalctl run <graph> --episodes N [--workers K] [--seed S] [--step-budget B]
 * [--set node.key=value …] [--outputs DIR] [--json] [--dataset D] [--split S]
 * [--episode-offset O] [--per-step-timeout SEC] [--per-call-timeout SEC]`: one batch through a real eval process,
 * no server needed. A live progress line on a terminal, a table of aggregates at the end;
 * `--json` prints the final summary on stdout. Exit 0 when the run finished (whatever its
 * episodes scored), 1 when it failed or was aborted, 2 for bad input (also when the eval
 * process refuses it), 130 after Ctrl-C.
 */
import { join } from 'node:path';
import { parseCliArgs } from './args.js';
import { execa } from 'execa';
import { BadInputError, isInputFault } from '../errors.js';
import { initialSummary } from '../eval-process/summary-writer.js';
import { DEFAULT_OUTPUTS_DIR, EVAL_PROCESS_MAIN } from '../paths.js';
import { parseSetFlags } from '../graph/graph.js';
import { inspectRunGraph } from '../scheduler/run-graph.js';
import { recordRunManifest } from '../scheduler/record-run-manifest.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import { assertDatasetSelection } from '../scheduler/dataset-selection.js';
import { parseRunInput, type FieldLabels } from '../spec/parse-run-spec.js';
import { runSpecOf, type RunInput } from '../spec/run-spec.js';
import { FILES, createRunDir, isDone, readSummary, touchDone, writeSpec, writeSummary } from '../store/run-dir.js';
import { describeStorage, storageCodeOfExit } from '../store/storage-fault.js';
import type { RunSpec, RunSummary } from '../store/types.js';

const USAGE =
  'usage: evalctl run <graph> --episodes N [--workers K] [--seed S] [--step-budget B] [--set node.key=value …] ' +
  '[--outputs DIR] [--json] [--dataset D] [--split S] [--episode-offset O] [--per-step-timeout SEC] [--per-call-timeout SEC]';

const POLL_MS = 200;
/** After Ctrl-C the eval process gets this long to write its summary before it is killed. */
const CANCEL_GRACE_MS = 10_000;

/** What each run-spec field is called on the command line, so an error names the flag. */
export const FLAG_LABELS: FieldLabels = {
  graphName: 'the graph name',
  episodeCount: '--episodes',
  workerCount: '--workers',
  seed: '--seed',
  stepBudget: '--step-budget',
  perStepTimeoutSec: '--per-step-timeout',
  perCallTimeoutSec: '--per-call-timeout',
  overrides: '--set',
  dataset: '--dataset',
  split: '--split',
  episodeOffset: '--episode-offset',
};

/** A number flag as a number when it reads as one, else its text (which the schema refuses, naming the flag). */
export function numeric(raw: string | undefined): number | string | undefined {
  if (raw === undefined) return undefined;
  const v = Number(raw);
  return raw.trim() !== '' && Number.isFinite(v) ? v : raw;
}

export interface RunArgs {
  /** The run, checked by the run-spec schema. */
  input: RunInput;
  outputsDir: string;
  json: boolean;
  help: false;
}

export function parseRunArgs(argv: string[]): RunArgs | { help: true } {
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
      'per-call-timeout': { type: 'string' },
      set: { type: 'string', multiple: true },
      outputs: { type: 'string' },
      json: { type: 'boolean' },
      dataset: { type: 'string' },
      split: { type: 'string' },
      'episode-offset': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { help: true };
  if (positionals.length !== 1) {
    throw new BadInputError(
      positionals.length === 0
        ? `missing the graph name; ${USAGE}`
        : `expected one graph name, got ${positionals.map((p) => `"${p}"`).join(' ')}`,
    );
  }
  const input = parseRunInput(
    {
      graphName: positionals[0],
      episodeCount: numeric(values.episodes),
      workerCount: numeric(values.workers),
      seed: numeric(values.seed),
      stepBudget: numeric(values['step-budget']),
      perStepTimeoutSec: numeric(values['per-step-timeout']),
      perCallTimeoutSec: numeric(values['per-call-timeout']),
      overrides: parseSetFlags(values.set ?? []),
      dataset: values.dataset,
      split: values.split,
      episodeOffset: numeric(values['episode-offset']),
    },
    FLAG_LABELS,
  );
  return { input, outputsDir: values.outputs ?? DEFAULT_OUTPUTS_DIR, json: values.json === true, help: false };
}

/** The spec of a checked CLI run: its graph found, the overrides applied, validated and frozen into it. */
export async function specFromInput(input: RunInput, runId: string): Promise<RunSpec> {
  return (await checkedInput(input, runId)).spec;
}

/** The spec of a checked CLI run and the nodesets its graph uses (for its manifest). */
async function checkedInput(input: RunInput, runId: string): Promise<{ spec: RunSpec; nodesets: NodesetEntry[] }> {
  const workspaceDir = process.env.ACTIVE_WORKSPACE_DIR || undefined;
  const { graph, nodesets } = await inspectRunGraph({ graphName: input.graphName, overrides: input.overrides, workspaceDir });
  await assertDatasetSelection(nodesets, input, workspaceDir);
  return { spec: runSpecOf(input, { runId, graph, activeWorkspaceDir: workspaceDir }), nodesets };
}

export async function run(argv: string[]): Promise<number> {
  const args = parseRunArgs(argv);
  if (args.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const { spec: probe, nodesets } = await checkedInput(args.input, '00000000_000000');
  // Ctrl-C from here on cancels the run, also before its eval process exists or has set up its own handlers.
  let interrupted = false;
  let child: ReturnType<typeof startEval> | undefined;
  const onSigint = () => {
    if (interrupted) {
      child?.kill('SIGKILL');
      return;
    }
    interrupted = true;
    if (!args.json) process.stderr.write('\ncancelling (Ctrl-C again to kill)…\n');
    // execa sends SIGKILL if it is still running CANCEL_GRACE_MS later (forceKillAfterDelay).
    child?.kill('SIGTERM');
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  const { runId, dir } = createRunDir(args.outputsDir);
  const spec = { ...probe, runId };
  await writeSpec(dir, spec);
  await recordRunManifest(dir, spec, nodesets, spec.activeWorkspaceDir);
  await writeSummary(dir, { ...initialSummary(spec), seq: 1 });

  const live = !args.json && process.stderr.isTTY === true;
  if (!args.json)
    process.stderr.write(`run ${runId}: ${spec.graphName}, ${spec.episodeCount} episodes on ${spec.workerCount} worker(s) → ${dir}\n`);

  if (interrupted) {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    const summary = await finishCancelled(dir);
    if (args.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    return 130;
  }
  child = startEval(dir);

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
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigint);
  if (live) process.stderr.write('\r\x1b[2K');

  let summary: RunSummary | undefined;
  try {
    summary = await readSummary(dir);
  } catch {
    summary = last;
  }
  // Interrupted before it could write its final summary (Ctrl-C reaches the eval process too, maybe before it set up its handlers): still a cancel.
  if (interrupted && !isDone(dir) && summary) summary = await finishCancelled(dir, summary);
  if (!isDone(dir) || !summary) {
    const storage = storageCodeOfExit(typeof result.exitCode === 'number' ? result.exitCode : null);
    const how =
      (result.signal ? `signal ${result.signal}` : `code ${result.exitCode}`) + (storage ? `: ${describeStorage(storage, dir)}` : '');
    process.stderr.write(`evalctl run: the eval process exited (${how}) without finishing run ${runId}; see ${join(dir, FILES.stderr)}\n`);
    if (args.json && summary) process.stdout.write(JSON.stringify({ ...summary, status: 'ABORTED' }, null, 2) + '\n');
    return interrupted ? 130 : 1;
  }
  if (args.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else process.stdout.write(renderSummary(summary, dir));
  if (summary.status === 'COMPLETED') return 0;
  if (summary.error) process.stderr.write(`evalctl run: run ${runId} ${summary.status}: ${summary.error.message}\n`);
  if (interrupted) return 130;
  // A run refused for its input exits 2, like input refused before the run started.
  return isInputFault(summary.error?.code) ? 2 : 1;
}

/** The run's eval process: its output appended to the run's logs, an IPC channel that tells it when this process is gone. */
function startEval(dir: string) {
  return execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir], {
    ipc: true,
    stdin: 'ignore',
    stdout: { file: join(dir, FILES.stdout), append: true },
    stderr: { file: join(dir, FILES.stderr), append: true },
    reject: false,
    cleanup: true,
    forceKillAfterDelay: CANCEL_GRACE_MS,
  });
}

/** Marks a run CANCELLED and finished on disk, keeping the episodes it recorded. */
async function finishCancelled(dir: string, current?: RunSummary): Promise<RunSummary> {
  const s = structuredClone(current ?? (await readSummary(dir)));
  s.status = 'CANCELLED';
  s.error = null;
  s.finishedAt ??= new Date().toISOString();
  delete s.pid;
  s.seq += 1;
  await writeSummary(dir, s);
  await touchDone(dir);
  return s;
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
  lines.push(
    `run ${s.runId} ${s.status}: ${s.episodesDone}/${s.episodeCount} episodes of ${s.graphName} (seed ${s.seed}, ${s.workerCount} worker(s))`,
  );
  if (s.aggregateMetrics.length > 0) {
    const rows = [
      ['metric', 'mean', '± stderr', 'min', 'max', 'n'],
      ...s.aggregateMetrics.map((m) => [m.name, fmt(m.mean), fmt(m.stderr), fmt(m.min), fmt(m.max), String(m.count)]),
    ];
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
