/**
 * `evalctl compare <baseline> <candidate…> [--metric m …] [--outputs DIR] [--json]`: the paired
 * comparison of runs in an outputs folder, no server needed. Prints per candidate and metric
 * the mean difference with its paired 95 % interval beside the unpaired one, the correlation,
 * p (McNemar exact for 0/1 metrics), win/tie/loss, the BH flag, then the flipped episodes; under
 * each candidate's line, how its run differs from the baseline's beyond config (as compareRuns' warnings).
 * Exit 0, or 2 for bad input (an unknown run, a run given twice, runs that share no episode).
 */
import { resolve } from 'node:path';
import {
  assertDistinctRuns,
  compareRuns,
  type CandidateComparison,
  type MetricComparison,
  type RunComparison,
  type TestMethod,
} from '../compare/compare-runs.js';
import { comparisonWarnings } from '../compare/comparison-warnings.js';
import { readRunScores } from '../compare/run-scores.js';
import { BadInputError } from '../errors.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { RunReader } from '../store/run-reader.js';
import { parseCommandArgs } from './args.js';
import { runRefOf } from './run-dir-arg.js';
import { textTable } from './text-table.js';

const USAGE =
  'usage: evalctl compare <baseline-run> <candidate-run>… [--metric NAME …] [--outputs DIR] [--json] [--flips N] (a run: its id under --outputs, or its directory)';

/** Flipped episodes listed per metric unless --flips says otherwise. */
const DEFAULT_FLIPS = 20;

const num = (v: number | null | undefined, digits = 4): string => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–');
const signed = (v: number | null | undefined): string =>
  typeof v === 'number' && Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(4)}` : '–';
const ci = (c: [number, number] | null): string => (c ? `[${signed(c[0])}, ${signed(c[1])}]` : '–');
const pFmt = (p: number | null): string => (p === null || !Number.isFinite(p) ? '–' : p < 1e-4 ? p.toExponential(1) : p.toFixed(4));

const TEST_LABEL: Record<TestMethod, string> = {
  'paired-t': ' t',
  'clustered-t': ' t (clustered)',
  'mcnemar-exact': ' mcnemar',
  'mcnemar-clustered': ' mcnemar (clustered)',
};

function metricRow(m: MetricComparison): string[] {
  const method = m.ciMethod === 'clustered-t' ? ` C=${m.clusters}` : '';
  return [
    `${m.metric}${m.goal === 'max' ? ' ↑' : m.goal === 'min' ? ' ↓' : ''}`,
    String(m.n),
    num(m.baselineMean),
    num(m.candidateMean),
    signed(m.meanDiff),
    ci(m.ci95) + method,
    ci(m.unpairedCi95),
    num(m.correlation, 3),
    pFmt(m.testP) + TEST_LABEL[m.testMethod],
    `${m.wins}/${m.ties}/${m.losses}`,
    m.verdict === null ? '' : m.verdict.toLowerCase().replace('_', ' '),
    m.bhSignificant ? '*' : '',
  ];
}

/** The comparison as `--json` prints it: each candidate with the API's `warnings` (how its run differs from the baseline's beyond config). */
export interface ComparisonOutput extends RunComparison {
  candidates: Array<CandidateComparison & { warnings: string[] }>;
}

/** `comparison` with each candidate's warnings, placed before its metrics so they are seen first. */
function withWarnings(comparison: RunComparison, warnings: readonly string[][]): ComparisonOutput {
  return {
    ...comparison,
    candidates: comparison.candidates.map(({ metrics, ...head }, i) => ({ ...head, warnings: warnings[i] ?? [], metrics })),
  };
}

export function renderComparison(c: ComparisonOutput, maxFlips = DEFAULT_FLIPS): string {
  const lines: string[] = [];
  for (const cand of c.candidates) {
    lines.push(
      `${cand.candidateRunId} − ${c.baselineRunId} (baseline): ${cand.overlap} shared episodes${cand.note ? `; ${cand.note}` : ''}`,
    );
    for (const w of cand.warnings) lines.push(`  warning: ${w}`);
    lines.push(
      ...textTable([
        ['metric', 'n', 'baseline', 'candidate', 'diff', 'paired 95 % CI', 'unpaired 95 % CI', 'corr', 'p', 'W/T/L', 'verdict', 'BH'],
        ...cand.metrics.map(metricRow),
      ]),
    );
    const excluded = cand.metrics.filter((m) => m.excludedPairs > 0).map((m) => `${m.metric} ${m.excludedPairs}`);
    if (excluded.length > 0) lines.push(`  pairs left out (an ending that does not count, or the metric missing): ${excluded.join(', ')}`);
    for (const m of cand.metrics) {
      if (m.flips.length === 0) continue;
      const shown = m.flips.slice(0, maxFlips);
      const gained = m.flips.filter((f) => f.direction === 'gained').length;
      lines.push(`  ${m.metric} flipped on ${m.flips.length} episode(s) (gained ${gained}, lost ${m.flips.length - gained}):`);
      for (const f of shown)
        lines.push(
          `    ${f.direction === 'gained' ? '+' : '-'} ${f.episodeId}  baseline #${f.baselineIndex} → candidate #${f.candidateIndex}`,
        );
      if (m.flips.length > shown.length) lines.push(`    … ${m.flips.length - shown.length} more (--flips N to list them)`);
    }
  }
  lines.push(
    'BH: * = flagged at a 5 % false discovery rate over every metric × candidate; ↑/↓ = higher/lower is better; W/T/L = candidate better/equal/worse by that goal (higher without one); verdict: the paired 95 % CI on the better or worse side of 0.',
  );
  return lines.join('\n') + '\n';
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      metric: { type: 'string', short: 'm', multiple: true },
      outputs: { type: 'string' },
      flips: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length < 2) throw new BadInputError(`give a baseline run and at least one candidate run; ${USAGE}`);
  const flips = values.flips === undefined ? DEFAULT_FLIPS : Number(values.flips);
  if (!Number.isInteger(flips) || flips < 0) throw new BadInputError(`--flips must be an integer ≥ 0, got "${values.flips}"`);
  const outputs = values.outputs ?? DEFAULT_OUTPUTS_DIR;
  const readers = positionals.map((arg) => {
    const ref = runRefOf(arg, outputs);
    return { reader: new RunReader(ref.outputsDir), runId: ref.runId };
  });
  // By directory (an id and a path may name one run; one id in two outputs folders is two runs).
  assertDistinctRuns(readers.map((r) => ({ key: resolve(r.reader.runDir(r.runId)), runId: r.runId })));
  const [baseline, ...candidates] = await Promise.all(readers.map((r) => readRunScores(r.reader, r.runId)));
  const comparison = compareRuns(baseline!, candidates, values.metric);
  const [base, ...cands] = readers.map((r) => r.reader.runDir(r.runId));
  const warnings = await Promise.all(cands.map((dir) => comparisonWarnings(base!, dir)));
  const out = withWarnings(comparison, warnings);
  process.stdout.write(values.json === true ? JSON.stringify(out, null, 2) + '\n' : renderComparison(out, flips));
  return 0;
}
