/** The gate's verdict table as text (the terminal) and as Markdown (a CI job summary). */
import type { GateResult, MetricGateVerdict } from '../compare/gate-verdicts.js';
import { textTable } from './text-table.js';

const signed = (v: number | null): string => (v === null ? '–' : `${v >= 0 ? '+' : ''}${v.toFixed(4)}`);
const num = (v: number | null): string => (v === null ? '–' : v.toFixed(4));
const interval = (c: [number, number] | null): string => (c ? `[${signed(c[0])}, ${signed(c[1])}]` : '–');
const levelOf = (m: MetricGateVerdict): string => `${+(100 * (1 - m.level)).toFixed(3)} %`;

const HEADER = [
  'metric',
  'requirement',
  'n',
  'baseline',
  'candidate',
  'diff',
  'anytime interval',
  'verdict',
  'decided at',
  'MDE',
  'fixed-n needed',
];

function row(m: MetricGateVerdict): string[] {
  return [
    `${m.metric}${m.goal === 'max' ? ' ↑' : m.goal === 'min' ? ' ↓' : ''}`,
    m.requirement,
    String(m.n),
    num(m.baselineMean),
    num(m.candidateMean),
    signed(m.meanDiff),
    `${interval(m.interval)} (${levelOf(m)})`,
    m.verdict,
    m.decidedAt === null ? '–' : String(m.decidedAt),
    num(m.mde),
    m.episodesNeeded === null ? '–' : String(m.episodesNeeded),
  ];
}

const FOOTER =
  'anytime interval: candidate − baseline, valid however often the comparison was watched (betting for bounded metrics, asymptotic otherwise), at the level Holm gave the metric; decided at: the pair (in episode order) where it was decided; MDE and fixed-n needed: for an inconclusive metric, the effect a fixed-n test finds at this n (80 % power) and the episodes it would need to tell the observed difference from the bound.';

export function renderGateText(g: GateResult): string {
  const lines = [
    `gate: ${g.verdict.toUpperCase()} — candidate ${g.candidateRunId} against baseline ${g.baselineRunId} (α = ${g.alpha}, Holm over ${g.metrics.length} metric(s))`,
    ...textTable([HEADER, ...g.metrics.map(row)]),
    ...g.metrics.map((m) => `  ${m.metric}: ${m.reason}`),
    ...g.notes.map((n) => `  note: ${n}`),
    FOOTER,
  ];
  return lines.join('\n') + '\n';
}

/** Markdown cells cannot hold a raw `|` or a line break. */
const cell = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

const ICON: Record<MetricGateVerdict['verdict'], string> = { pass: '✅ pass', fail: '❌ fail', inconclusive: '⚠️ inconclusive' };

export function renderGateMarkdown(g: GateResult): string {
  const lines = [
    `### Gate: ${ICON[g.verdict]}`,
    '',
    `Candidate \`${g.candidateRunId}\` against baseline \`${g.baselineRunId}\`, α = ${g.alpha} (Holm over ${g.metrics.length} metric(s)).`,
    '',
    `| ${HEADER.map(cell).join(' | ')} |`,
    `|${HEADER.map((_, i) => (i <= 1 || i === 7 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...g.metrics.map((m) => {
      const r = row(m);
      r[7] = ICON[m.verdict];
      return `| ${r.map(cell).join(' | ')} |`;
    }),
    '',
    ...g.metrics.map((m) => `- **${cell(m.metric)}**: ${cell(m.reason)}`),
    ...g.notes.map((n) => `- _${cell(n)}_`),
    '',
    `<sub>${cell(FOOTER)}</sub>`,
  ];
  return lines.join('\n') + '\n';
}
