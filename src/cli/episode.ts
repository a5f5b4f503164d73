/**
 * `evalctl episode <graph> --index I [--seed S] [--json] [--step-budget B]
 * [--set node.key=value …] [--dataset D] [--split S] [--outputs DIR] [--allow-code-tools]`: runs one episode with
 * real hosts, in this process, and prints its record. Episode I here is episode I of a run
 * with the same seed: the same env episode, the same seed, the same metrics. A dataset
 * episode's record is followed by its sample (input, target, answer, extracted answer, each
 * score with its explanation), then, with --json, its transcript (the events.jsonl entries).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadInputError } from '../errors.js';
import { EPISODE_FILES } from '../eval-process/episode-writer.js';
import { runBatch } from '../eval-process/run-batch.js';
import { isSampleRecord, sampleColumnsOf } from '../export/sample-columns.js';
import { initialSummary } from '../eval-process/summary-writer.js';
import { createRunDir, episodeDir, writeSpec, writeSummary } from '../store/run-dir.js';
import type { EpisodeRecord } from '../store/types.js';
import { parseSetFlags } from '../graph/graph.js';
import { parseRunInput } from '../spec/parse-run-spec.js';
import { parseCliArgs } from './args.js';
import { FLAG_LABELS, numeric, specFromInput } from './run.js';
import { signalExitCode } from './signal-exit.js';

const USAGE =
  'usage: evalctl episode <graph> --index I [--seed S] [--json] [--step-budget B] [--set node.key=value …] [--dataset D] [--split S] [--outputs DIR] [--allow-code-tools]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      index: { type: 'string', short: 'i' },
      seed: { type: 'string' },
      json: { type: 'boolean' },
      'step-budget': { type: 'string' },
      'per-step-timeout': { type: 'string' },
      set: { type: 'string', multiple: true },
      dataset: { type: 'string' },
      split: { type: 'string' },
      outputs: { type: 'string' },
      'allow-code-tools': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1) {
    throw new BadInputError(
      positionals.length === 0
        ? `missing the graph name; ${USAGE}`
        : `expected one graph name, got ${positionals.map((p) => `"${p}"`).join(' ')}`,
    );
  }
  if (values.index === undefined) throw new BadInputError('--index I is required');
  // One episode of a run: the env episode asked for is the run's episode offset.
  const input = parseRunInput(
    {
      graphName: positionals[0],
      episodeCount: 1,
      episodeOffset: numeric(values.index),
      seed: numeric(values.seed),
      stepBudget: numeric(values['step-budget']),
      perStepTimeoutSec: numeric(values['per-step-timeout']),
      overrides: parseSetFlags(values.set ?? []),
      dataset: values.dataset,
      split: values.split,
    },
    { ...FLAG_LABELS, episodeOffset: '--index' },
  );
  const index = input.episodeOffset;
  const probe = await specFromInput(input, '00000000_000000', '--set', values['allow-code-tools'] === true);

  const keep = values.outputs !== undefined;
  const outputs = values.outputs ?? (await mkdtemp(join(tmpdir(), 'evalctl-episode-')));
  const controller = new AbortController();
  let caught: NodeJS.Signals = 'SIGINT';
  const onSignal = (signal: NodeJS.Signals) => {
    caught = signal;
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const { runId, dir } = createRunDir(outputs);
    const spec = { ...probe, runId };
    await writeSpec(dir, spec);
    await writeSummary(dir, initialSummary(spec));
    const summary = await runBatch({ runDir: dir, signal: controller.signal });
    if (summary.status === 'FAILED')
      throw Object.assign(new Error(summary.error?.message ?? 'the episode could not run'), { code: summary.error?.code });
    const raw = summary.episodes[0];
    if (!raw) {
      process.stderr.write('evalctl episode: interrupted before the episode ended\n');
      return signalExitCode(caught);
    }
    // The record speaks of the episode asked for, not of its place in this one-episode run.
    const record: EpisodeRecord = { ...raw, index };
    if (values.json) process.stdout.write(JSON.stringify(await withSample(record, episodeDir(dir, 0)), null, 2) + '\n');
    else process.stdout.write(renderRecord(record, keep ? episodeDir(dir, 0) : undefined));
    return controller.signal.aborted ? signalExitCode(caught) : 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!keep) await rm(outputs, { recursive: true, force: true });
  }
}

/** A dataset episode's record with its sample view and its transcript (the events.jsonl entries); any other record as it is. */
async function withSample(r: EpisodeRecord, dir: string): Promise<EpisodeRecord | Record<string, unknown>> {
  if (!isSampleRecord(r)) return r;
  const { input, target, answer, extracted } = sampleColumnsOf(r);
  const sample = { input, target, answer, extracted, scores: r.scores ?? [] };
  let text = '';
  try {
    text = await readFile(join(dir, EPISODE_FILES.events), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const transcript: unknown[] = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
  return { ...r, sample, transcript };
}

function renderRecord(r: EpisodeRecord, dir: string | undefined): string {
  const lines = [
    `episode ${r.index} (${r.episodeId}): ${r.status} after ${r.steps} of ${r.stepBudget} steps, ${r.durationMs} ms, seed ${r.seed}`,
  ];
  if (isSampleRecord(r)) {
    const c = sampleColumnsOf(r);
    for (const k of ['input', 'target', 'answer', 'extracted'] as const) if (c[k] !== null) lines.push(`  ${k}: ${c[k]}`);
    for (const s of r.scores ?? []) lines.push(`  score ${s.scorer}${s.rescored ? ' (rescored)' : ''}: ${s.value} (${s.explanation})`);
  } else if (r.instruction) lines.push(`  instruction: ${r.instruction}`);
  if (r.error) lines.push(`  error: ${r.error}`);
  const names = Object.keys(r.metrics);
  const w = Math.max(0, ...names.map((n) => n.length));
  for (const n of names) lines.push(`  ${n.padEnd(w)}  ${String(r.metrics[n])}`);
  if (dir) lines.push(`  folder: ${dir}`);
  return lines.join('\n') + '\n';
}
