/**
 * `evalctl run <graph> --episodes N [--workers K] [--max-in-flight N] [--seed S] [--step-budget B]
 * [--set node.key=value …] [--outputs DIR] [--json] [--dataset D] [--split S]
 * [--episode-offset O] [--per-step-timeout SEC] [--per-call-timeout SEC] [--config eval.toml]
 * [--name N] [--tag T …] [--note TEXT] [--shard-size N] [--shard k/K] [--allow-code-tools]`: one batch through a
 * real eval process, no server needed. `--shard k/K` plays only task k's shards and writes a
 * partial run directory for `evalctl merge`. A live progress line on a terminal, a table of
 * aggregates at the end; `--json` prints the final summary on stdout. Exit 0 when the run
 * finished (whatever its episodes scored), 1 when it failed or was aborted, 2 for bad input
 * (also when the eval process refuses it), 130 after Ctrl-C and 143 after SIGTERM. `--config` reads the run from a
 * TOML, YAML or JSON run file (docs/run-files.md); flags given beside it override the file.
 * `--server URL` queues the run on a server instead and follows it there (`--wait-for-room SEC`
 * when its queue is full).
 */
import { basename, join } from 'node:path';
import { parseCliArgs } from './args.js';
import { RemoteServer, type RemoteOptions } from './remote-run.js';
import { runSweepRemote, sweepRequestOf } from './run-sweep.js';
import { signalExitCode } from './signal-exit.js';
import { CANCEL_GRACE_MS, takeEvalSpare, type EvalRunProcess } from './eval-spare.js';
import { BadInputError } from '../errors.js';
import { runExitCode } from './run-exit-code.js';
import { initialSummary } from '../eval-process/summary-writer.js';
import { DEFAULT_OUTPUTS_DIR, EVAL_PROCESS_MAIN, defaultLlmCacheDir } from '../paths.js';
import { heldModelKeys, MODEL_KEYS_FD_ENV, withoutModelKeys } from '../core/model-keys.js';
import { parseSetFlags } from '../graph/graph.js';
import { assertModelSetup, inspectRunGraph } from '../scheduler/run-graph.js';
import { recordRunManifest } from '../scheduler/record-run-manifest.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import { assertDatasetSelection } from '../scheduler/dataset-selection.js';
import { parseRunInput, type FieldLabels } from '../spec/parse-run-spec.js';
import { checkWaitForRoom } from '../scheduler/submit-when-room.js';
import { readRunFile, RunFileError, runFileLabels, type SweepGrid } from '../spec/run-file.js';
import { runSpecOf, type RunInput } from '../spec/run-spec.js';
import { runPolicyFromEnv } from '../spec/run-policy.js';
import { assertTaskHasShards, describeIndices, episodeIndicesOf, parseShardFlag, type ShardTask } from '../spec/shards.js';
import { FILES, createRunDir, isDone, readSummary, readSummaryHead, touchDone, writeSpec, writeSummary } from '../store/run-dir.js';
import { describeStorage, storageCodeOfExit } from '../store/storage-fault.js';
import { ci95Of, shownStderr } from '../store/aggregate.js';
import type { MetricAggregate, RunSpec, RunSummary, StopWhenState } from '../store/types.js';
import { textTable } from './text-table.js';
import { runRefOf } from './run-dir-arg.js';
import { RunReader } from '../store/run-reader.js';
import { parseStopWhen } from '../compare/stop-decision.js';
import { frozenBaselineFor, writeFrozenBaseline } from '../compare/frozen-baseline.js';
import { concurrencyOfSpec } from '../scheduler/concurrency-of-spec.js';
import { describeConcurrency } from '../spec/run-concurrency.js';
import { orderAggregates } from '../compare/metric-order.js';
import { readRunModels } from '../store/report.js';
import { describeRunModel, type RunModel } from '../store/run-models.js';
import { repeatsAdvice } from '../stats/variance-components.js';

const USAGE =
  'usage: evalctl run [<graph>] [--config eval.toml] --episodes N [--workers K] [--max-in-flight N] [--seed S] [--step-budget B] [--set node.key=value …] ' +
  '[--outputs DIR] [--json] [--dataset D] [--split S] [--episode-offset O] [--per-step-timeout SEC] [--per-call-timeout SEC] [--repeats K] ' +
  '[--max-infra-error-rate R] [--no-preflight] [--stop-when decided|halfwidth<=X [--against BASELINE_RUN] [--require "success > 0"] [--max-episodes N]] ' +
  '[--name N] [--tag T …] [--note TEXT] [--shard-size N] [--shard k/K] [--allow-code-tools] [--server URL [--token T] [--wait-for-room SEC]]';

const POLL_MS = 200;
/** How often summary.json is read when no progress line is drawn (--json, or stderr not a terminal). */
const QUIET_POLL_MS = 2000;

/** What each run-spec field is called on the command line, so an error names the flag. */
export const FLAG_LABELS: FieldLabels = {
  graphName: 'the graph name',
  episodeCount: '--episodes',
  workerCount: '--workers',
  maxInFlight: '--max-in-flight',
  seed: '--seed',
  stepBudget: '--step-budget',
  perStepTimeoutSec: '--per-step-timeout',
  perCallTimeoutSec: '--per-call-timeout',
  overrides: '--set',
  dataset: '--dataset',
  split: '--split',
  episodeOffset: '--episode-offset',
  name: '--name',
  tags: '--tag',
  note: '--note',
  shardSize: '--shard-size',
  repeats: '--repeats',
  maxInfraErrorRate: '--max-infra-error-rate',
  preflight: '--no-preflight',
  stopWhen: '--stop-when',
};

/** A decimal number as a person writes one (`Number` would also take `0x10`, `0b1` or `1_0`-free forms like `Infinity`). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** A number flag as a number when it reads as a decimal one, else its text (which the schema refuses, naming the flag). */
export function numeric(raw: string | undefined): number | string | undefined {
  if (raw === undefined) return undefined;
  const t = raw.trim();
  return DECIMAL.test(t) ? Number(t) : raw;
}

export interface RunArgs {
  /** The run, checked by the run-spec schema. */
  input: RunInput;
  outputsDir: string;
  json: boolean;
  /** `--shard k/K`: play only this task's shards, into a partial run directory. */
  shard?: ShardTask;
  help: false;
  /** The run file's sweep grid, when `--config` named a file with one. */
  sweep?: SweepGrid;
  /** The run file, when `--config` named one. */
  configFile?: string;
  /** Queue the run on this server instead of running it here. */
  remote?: RemoteOptions;
  /** How an error about the overrides names where they came from: `--set`, the run file's line, or both. */
  overridesLabel: string;
  /** `--against`: the baseline run whose scores are frozen into the run directory (a local run). */
  against?: { outputsDir: string; runId: string };
  /** `--allow-code-tools`: the run may offer code-running tools (python, command tools); EVAL_ALLOW_CODE_TOOLS=1 does the same. */
  allowCodeTools: boolean;
}

/** `--set` patches over the file's overrides, key by key within each node. */
function mergeOverrides(file: unknown, flags: Record<string, Record<string, unknown>>): unknown {
  if (Object.keys(flags).length === 0) return file;
  if (file === undefined) return flags;
  if (typeof file !== 'object' || file === null || Array.isArray(file)) return file; // the schema names the file's bad value
  const out: Record<string, unknown> = { ...(file as Record<string, unknown>) };
  for (const [node, patch] of Object.entries(flags)) {
    const base = out[node];
    out[node] = typeof base === 'object' && base !== null && !Array.isArray(base) ? { ...base, ...patch } : patch;
  }
  return out;
}

export function parseRunArgs(argv: string[]): RunArgs | { help: true } {
  const { values, positionals } = parseCliArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      episodes: { type: 'string', short: 'n' },
      workers: { type: 'string', short: 'w' },
      'max-in-flight': { type: 'string' },
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
      config: { type: 'string', short: 'c' },
      server: { type: 'string' },
      token: { type: 'string' },
      'wait-for-room': { type: 'string' },
      name: { type: 'string' },
      tag: { type: 'string', multiple: true },
      note: { type: 'string' },
      'shard-size': { type: 'string' },
      shard: { type: 'string' },
      repeats: { type: 'string' },
      'allow-code-tools': { type: 'boolean' },
      'max-infra-error-rate': { type: 'string' },
      'no-preflight': { type: 'boolean' },
      'stop-when': { type: 'string' },
      against: { type: 'string' },
      require: { type: 'string' },
      'max-episodes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { help: true };
  const file = values.config === undefined ? undefined : readRunFile(values.config);
  if (positionals.length > 1) throw new BadInputError(`expected one graph name, got ${positionals.map((p) => `"${p}"`).join(' ')}`);
  if (positionals.length === 0 && file?.fields.graphName === undefined) {
    throw new BadInputError(
      file ? `missing the graph name: give it, or set graphName in ${file.path}; ${USAGE}` : `missing the graph name; ${USAGE}`,
    );
  }
  if (values['max-episodes'] !== undefined && values.episodes !== undefined && values['max-episodes'] !== values.episodes)
    throw new BadInputError(
      `--max-episodes ${values['max-episodes']} and --episodes ${values.episodes}: a run that may stop early plays at most its episodes; give one of them`,
    );
  const against = values.against === undefined ? undefined : runRefOf(values.against, values.outputs ?? DEFAULT_OUTPUTS_DIR);
  const flags: Record<string, unknown> = {
    graphName: positionals[0],
    episodeCount: numeric(values.episodes ?? values['max-episodes']),
    stopWhen: stopWhenOfFlags(values['stop-when'], against?.runId, values.require),
    workerCount: numeric(values.workers),
    maxInFlight: numeric(values['max-in-flight']),
    seed: numeric(values.seed),
    stepBudget: numeric(values['step-budget']),
    perStepTimeoutSec: numeric(values['per-step-timeout']),
    perCallTimeoutSec: numeric(values['per-call-timeout']),
    dataset: values.dataset,
    split: values.split,
    episodeOffset: numeric(values['episode-offset']),
    name: values.name,
    tags: values.tag,
    note: values.note,
    shardSize: numeric(values['shard-size']),
    repeats: numeric(values.repeats),
    maxInfraErrorRate: numeric(values['max-infra-error-rate']),
    preflight: values['no-preflight'] === true ? false : undefined,
  };
  const setFlags = parseSetFlags(values.set ?? []);
  // Flags override the file: a flag given wins, a flag left out leaves the file's value.
  const raw: Record<string, unknown> = { ...file?.fields };
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) raw[k] = v;
  const overrides = mergeOverrides(file?.fields.overrides, setFlags);
  if (overrides !== undefined) raw.overrides = overrides;
  const labels: FieldLabels = { ...FLAG_LABELS };
  if (values['max-episodes'] !== undefined) labels.episodeCount = '--max-episodes';
  if (file) for (const [k, label] of Object.entries(runFileLabels(file))) if (flags[k] === undefined) labels[k] = label;
  if (file?.fields.overrides !== undefined && Object.keys(setFlags).length > 0) labels.overrides = `${labels.overrides} with --set`;
  const input = parseRunInput(raw, labels);
  if (values.server === undefined && (values['wait-for-room'] !== undefined || values.token !== undefined))
    throw new BadInputError(`--${values.token !== undefined ? 'token' : 'wait-for-room'} needs --server URL: a local run does not queue`);
  if (values.shard !== undefined && values.server !== undefined)
    throw new BadInputError(
      '--shard plays part of a run here, for evalctl merge; it does not go with --server (a server with --redis spreads a run over its workers itself)',
    );
  if (values['allow-code-tools'] === true && values.server !== undefined)
    throw new BadInputError(
      "--allow-code-tools is the operator's switch of a local run; with --server, the server's own switch (evalctl serve --allow-code-tools) decides",
    );
  const shard = values.shard === undefined ? undefined : parseShardFlag(values.shard);
  if (shard) assertTaskHasShards(input, shard);
  let remote: RemoteOptions | undefined;
  if (values.server !== undefined) {
    if (!/^https?:\/\/[^/]/.test(values.server)) throw new BadInputError(`--server must be an http(s) URL, got "${values.server}"`);
    const wait = values['wait-for-room'];
    remote = {
      server: values.server,
      token: values.token ?? (process.env.EVAL_API_TOKEN || undefined),
      waitForRoomSec: wait === undefined ? undefined : checkWaitForRoom(numeric(wait), '--wait-for-room'),
    };
  }
  return {
    ...(remote ? { remote } : {}),
    input,
    outputsDir: values.outputs ?? DEFAULT_OUTPUTS_DIR,
    json: values.json === true,
    help: false,
    ...(file?.sweep ? { sweep: file.sweep } : {}),
    ...(file ? { configFile: file.path } : {}),
    ...(shard ? { shard } : {}),
    ...(against && !remote ? { against } : {}),
    overridesLabel: labels.overrides ?? 'overrides',
    allowCodeTools: values['allow-code-tools'] === true,
  };
}

/**
 * The stopWhen of `--stop-when`, `--against` and `--require`; undefined without --stop-when
 * (BAD_USER_INPUT when --against or --require come without it).
 */
function stopWhenOfFlags(text: string | undefined, against: string | undefined, require: string | undefined): unknown {
  if (text === undefined) {
    if (against !== undefined || require !== undefined)
      throw new BadInputError(
        `--${against !== undefined ? 'against' : 'require'} says what an early stop compares: add --stop-when decided`,
      );
    return undefined;
  }
  const when = parseStopWhen(text);
  return {
    when: when.kind === 'decided' ? 'decided' : { halfwidth: when.halfwidth },
    ...(against !== undefined ? { against } : {}),
    ...(require !== undefined ? { requirements: [require] } : {}),
  };
}

/** The spec of a checked CLI run: its graph found, the overrides applied, validated and frozen into it. */
export async function specFromInput(input: RunInput, runId: string, overridesLabel = '--set', allowCodeTools = false): Promise<RunSpec> {
  return (await checkedInput(input, runId, overridesLabel, allowCodeTools)).spec;
}

/** The spec of a checked CLI run and the nodesets its graph uses (for its manifest). */
async function checkedInput(
  input: RunInput,
  runId: string,
  overridesLabel: string,
  allowCodeTools: boolean,
): Promise<{ spec: RunSpec; nodesets: NodesetEntry[] }> {
  const workspaceDir = process.env.ACTIVE_WORKSPACE_DIR || undefined;
  const info = await inspectRunGraph({
    graphName: input.graphName,
    overrides: input.overrides,
    workspaceDir,
    overridesLabel,
    // The same rules as a server's: a run file may come from anyone.
    policy: runPolicyFromEnv(process.env, { allowCodeTools }),
  });
  const { graph, nodesets, metricRanges, models, codeTools } = info;
  await assertDatasetSelection(nodesets, input, workspaceDir, { defaults: false });
  assertModelSetup(input.graphName, info);
  return { spec: runSpecOf(input, { runId, graph, models, metricRanges, activeWorkspaceDir: workspaceDir, codeTools }), nodesets };
}

export async function run(argv: string[]): Promise<number> {
  const args = parseRunArgs(argv);
  if (args.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (args.sweep && args.configFile) {
    const file = basename(args.configFile);
    const line = readRunFile(args.configFile).lineOf('sweep');
    const request = sweepRequestOf(args.sweep, file, line);
    if (!args.remote)
      throw new RunFileError(
        file,
        line,
        'this run file holds a sweep grid, which a server queues and compares: add --server URL (evalctl serve), or remove "sweep" to run the base here',
        'sweep',
      );
    return runSweepRemote(args.input, request, args.remote, args.json);
  }
  if (args.remote) return runRemote(args, args.remote);
  const { spec: probe, nodesets } = await checkedInput(args.input, '00000000_000000', args.overridesLabel, args.allowCodeTools);
  const baseline = args.against ? await frozenBaselineFor(probe, new RunReader(args.against.outputsDir), args.against.runId) : undefined;
  // Ctrl-C from here on cancels the run, also before its eval process exists or has set up its own handlers.
  let interrupted: NodeJS.Signals | undefined;
  let child: EvalRunProcess | undefined;
  const onSigint = (signal: NodeJS.Signals) => {
    if (interrupted) {
      child?.kill('SIGKILL');
      return;
    }
    interrupted = signal;
    if (!args.json) process.stderr.write('\ncancelling (Ctrl-C again to kill)…\n');
    // SIGKILL follows if it is still running CANCEL_GRACE_MS later.
    child?.kill('SIGTERM');
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  const { runId, dir } = createRunDir(args.outputsDir);
  defaultLlmCacheDir(args.outputsDir);
  const spec: RunSpec = { ...probe, runId, ...(args.shard ? { shard: args.shard } : {}) };
  if (baseline) await writeFrozenBaseline(dir, baseline);
  await writeSpec(dir, spec);
  await recordRunManifest(dir, spec, nodesets, spec.activeWorkspaceDir);
  await writeSummary(dir, { ...initialSummary(spec), seq: 1 });

  const live = !args.json && process.stderr.isTTY === true;
  if (!args.json)
    process.stderr.write(
      `run ${runId}: ${spec.graphName}, ${spec.shard ? `shard task ${spec.shard.task}/${spec.shard.of} (episodes ${describeIndices(episodeIndicesOf(spec))}) of ` : ''}${spec.episodeCount} episodes${spec.repeats !== undefined && spec.repeats > 1 ? ` × ${spec.repeats} repeats` : ''} on ${spec.workerCount} worker(s) → ${dir}\n`,
    );
  const concurrency = args.json ? null : concurrencyOfSpec(spec, nodesets);
  if (concurrency) process.stderr.write(`${describeConcurrency(concurrency)}\n`);

  if (interrupted) {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    const summary = await finishCancelled(dir);
    if (args.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    return signalExitCode(interrupted);
  }
  child = await startEval(dir);
  // A Ctrl-C while the spare was being handed the run.
  if (interrupted) child.kill('SIGTERM');

  const started = Date.now();
  let last: RunSummary | undefined;
  // Without a progress line the summary is read only as a fallback for the end (a scripted run's CLI
  // should not take CPU from its own eval process); progress needs summary.json alone, not the records.
  const poll = setInterval(
    () => {
      void readSummaryHead(dir)
        .then((s) => {
          if (last && s.seq <= last.seq) return;
          last = s;
          if (live) process.stderr.write(`\r\x1b[2K${progressLine(s, Date.now() - started)}`);
        })
        .catch(() => {});
    },
    live ? POLL_MS : QUIET_POLL_MS,
  );

  const result = await child.exited;
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
    return interrupted ? signalExitCode(interrupted) : 1;
  }
  if (args.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else process.stdout.write(renderSummary(summary, dir, await readRunModels(dir)));
  if (summary.status === 'COMPLETED') return 0;
  if (summary.error) process.stderr.write(`evalctl run: run ${runId} ${summary.status}: ${summary.error.message}\n`);
  if (interrupted) return signalExitCode(interrupted);
  return runExitCode(summary);
}

/**
 * Follows a run on a server to its end, with the live progress line on a terminal. The first
 * Ctrl-C (or SIGTERM) cancels `what` there (its finished episodes are kept) and keeps following
 * to its end; a second stops following. Returns the signal that interrupted it, if one did.
 */
export async function followRemoteRun(
  server: RemoteServer,
  runId: string,
  o: { json: boolean; command: string; what: string },
): Promise<NodeJS.Signals | undefined> {
  const live = !o.json && process.stderr.isTTY === true;
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(signalExitCode(signal));
    interrupted = signal;
    if (!o.json) process.stderr.write(`\ncancelling ${o.what} on the server (Ctrl-C again to stop following)…\n`);
    server.cancel(runId).catch((err: unknown) => process.stderr.write(`${o.command}: cancel failed: ${(err as Error).message}\n`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = Date.now();
  try {
    for await (const state of server.progress(runId)) {
      if (live) process.stderr.write(`\r\x1b[2K${progressLine({ aggregateMetrics: [], ...state } as RunSummary, Date.now() - started)}`);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (live) process.stderr.write('\r\x1b[2K');
  }
  return interrupted;
}

/** `--server`: queue the run there, follow its subscription with the same live line, print the same table (or summary with --json). */
async function runRemote(args: RunArgs, opts: RemoteOptions): Promise<number> {
  const server = new RemoteServer(opts);
  const { runId, concurrency } = await server.start(args.input, opts.waitForRoomSec);
  if (!args.json) {
    process.stderr.write(
      `run ${runId}: ${args.input.graphName}, ${args.input.episodeCount} episodes on ${args.input.workerCount} worker(s), queued on ${server.base}\n`,
    );
    if (concurrency) process.stderr.write(`${describeConcurrency(concurrency)}\n`);
  }
  const interrupted = await followRemoteRun(server, runId, { json: args.json, command: 'evalctl run', what: 'the run' });
  const summary = await server.summary(runId);
  if (args.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else process.stdout.write(renderSummary(summary, `${server.base}/runs/${runId}/export.tar.gz (on the server)`));
  if (summary.status === 'COMPLETED') return 0;
  if (summary.error) process.stderr.write(`evalctl run: run ${runId} ${summary.status}: ${summary.error.message}\n`);
  if (interrupted) return signalExitCode(interrupted);
  return runExitCode(summary);
}

/**
 * The run's eval process: the spare started with the command when there is one (it has loaded
 * while this process checked the run), else a new one. Its output is appended to the run's logs,
 * and an IPC channel tells it when this process is gone.
 */
async function startEval(dir: string): Promise<EvalRunProcess> {
  const logs = { stdout: join(dir, FILES.stdout), stderr: join(dir, FILES.stderr) };
  const fromSpare = await takeEvalSpare()?.go(dir, logs);
  if (fromSpare) return fromSpare;
  // Loaded only here: with the spare, most runs never need it.
  const { execa } = await import('execa');
  // The model keys on a pipe of their own (descriptor 3), never in the environment (core/model-keys.ts).
  const child = execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir], {
    ipc: true,
    stdio: [
      'ignore',
      { file: logs.stdout, append: true },
      { file: logs.stderr, append: true },
      Buffer.from(JSON.stringify(heldModelKeys())),
    ],
    extendEnv: false,
    env: { ...withoutModelKeys(process.env), [MODEL_KEYS_FD_ENV]: '3' },
    reject: false,
    cleanup: true,
    forceKillAfterDelay: CANCEL_GRACE_MS,
  });
  return {
    kill: (signal) => child.kill(signal),
    exited: child.then((r) => ({ exitCode: typeof r.exitCode === 'number' ? r.exitCode : null, signal: r.signal ?? null })),
  };
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

/** A number for the terminal; '–' for none (a summary.json holds null where a statistic could not be computed). */
const fmt = (v: number | null | undefined): string =>
  typeof v !== 'number' || !Number.isFinite(v) ? '–' : Number.isInteger(v) ? String(v) : Math.abs(v) >= 1000 ? v.toFixed(1) : v.toFixed(4);

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
  // The run's order (primary first); among metrics that declare nothing, the usual headline names first.
  const preferred = ['success', 'spl', 'return'];
  const at = (name: string): number => (preferred.includes(name) ? preferred.indexOf(name) : preferred.length);
  const ranked = orderAggregates(s.aggregateMetrics);
  const metrics = ranked.some((m) => m.primary || m.goal) ? ranked : [...ranked].sort((a, b) => at(a.name) - at(b.name));
  const means = metrics.slice(0, 3).map((m) => `${m.name === 'success' ? 'SR' : m.name} ${fmt(m.mean)}`);
  return [`${bar} ${s.episodesDone}/${s.episodeCount}`, `${s.status.toLowerCase()}`, `ETA ${eta}`, ...means].join(' · ');
}

/** "[lo, hi] wilson", with the cluster count when clustered; "–" below two episodes. */
function ciCell(m: MetricAggregate): string {
  const ci = ci95Of(m);
  if (!ci) return '–';
  const method = m.ciMethod ?? 't';
  // Wilson with a clustered standard error beside it: a rate at 0 or 100 % over C clusters, each counted once.
  const clustered = method === 'clustered-t' || method === 'clustered-logit-t' || (method === 'wilson' && m.clusteredStderr !== undefined);
  return `[${fmt(ci[0])}, ${fmt(ci[1])}] ${method}${m.clusters !== undefined && clustered ? ` C=${m.clusters}` : ''}`;
}

/** "TIMEOUT 2, ERROR 1" or "–". */
const excludedCell = (m: MetricAggregate): string =>
  Object.entries(m.excluded ?? {})
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '–';

/** Under the table of a run with repeats: what n counts, and per metric the variance components and which dial narrows the bar. */
function repeatsLines(s: RunSummary): string[] {
  const out = [`  ${s.repeats} plays per episode: n counts episodes, each scoring the mean of its plays`];
  for (const m of s.aggregateMetrics) {
    const advice = repeatsAdvice({ repeats: m.repeats ?? s.repeats!, between: m.betweenVar ?? null, within: m.withinVar ?? null });
    // A metric every play agrees on (e.g. success 1 throughout) has nothing to tell apart.
    if (advice === null || (m.betweenVar === 0 && m.withinVar === 0)) continue;
    out.push(`  ${m.name}: σ²_between ${fmt(m.betweenVar!)}, σ²_within ${fmt(m.withinVar!)}; ${advice}`);
  }
  return out;
}

/** "stopped at episode 84 of 500 (decided: pass, success > 0 against …): 416 not played; a fixed-n plan needed 120". */
export function stopWhenLine(w: StopWhenState): string {
  const ci = w.interval ? ` interval [${fmt(w.interval[0])}, ${fmt(w.interval[1])}]` : '';
  const what = `${w.requirement ?? `${w.rule} on ${w.metric}`}${w.against ? ` against ${w.against}` : ''}`;
  if (!w.stopped) return `stopWhen ${what}: not stopped after ${w.read} episodes${ci}`;
  const st = w.stopped;
  const verdict = w.verdict ? `: ${w.verdict}` : '';
  const fixed = st.fixedNPlan === null ? '' : `; a fixed-n plan needed about ${st.fixedNPlan}`;
  return `stopWhen ${what}: stopped at episode ${st.atEpisode} of ${st.planned} (${st.reason}${verdict})${ci}, ${st.saved} not played${fixed}`;
}

/** The end-of-run table: aggregates per metric, the models asked, counts per ending, where the run lives. */
export function renderSummary(s: RunSummary, dir: string, models: readonly RunModel[] = []): string {
  const lines: string[] = [];
  lines.push(
    `run ${s.runId} ${s.status}: ${s.episodesDone}/${s.episodeCount} ${s.repeats !== undefined && s.repeats > 1 ? `plays (${s.episodeCount / s.repeats} episodes × ${s.repeats} repeats)` : 'episodes'} of ${s.graphName} (seed ${s.seed}, ${s.workerCount} worker(s))`,
  );
  if (s.error) lines.push(`  ${s.error.code}: ${s.error.message}`);
  if (s.aggregateMetrics.length > 0) {
    const rows = [
      ['metric', 'mean', '± stderr', 'min', 'max', 'n', '95 % CI', 'excluded'],
      ...orderAggregates(s.aggregateMetrics).map((m) => [
        `${m.name}${m.primary ? ' *' : ''}${m.goal === 'max' ? ' ↑' : m.goal === 'min' ? ' ↓' : ''}`,
        fmt(m.mean),
        fmt(shownStderr(m)),
        fmt(m.min),
        fmt(m.max),
        String(m.count),
        ciCell(m),
        excludedCell(m),
      ]),
    ];
    lines.push(...textTable(rows));
  }
  if (s.aggregateMetrics.some((m) => Object.keys(m.excluded ?? {}).length > 0))
    lines.push('  means count the partial metrics of every ending but CANCELLED and INFRA_ERROR (docs/statistics.md)');
  if (s.repeats !== undefined && s.repeats > 1) lines.push(...repeatsLines(s));
  for (const m of models) {
    lines.push(`model ${describeRunModel(m)}`);
    if (m.repeatsNote) lines.push(`  repeats: ${m.repeatsNote}`);
  }
  if (s.stopWhen) lines.push(stopWhenLine(s.stopWhen));
  const counts = Object.entries(s.statusCounts).map(([k, v]) => `${k} ${v}`);
  if (counts.length > 0) lines.push(`endings: ${counts.join(', ')}${s.timedOut ? ' (timeouts depend on machine speed)' : ''}`);
  lines.push(`run dir: ${dir}`);
  return lines.join('\n') + '\n';
}
