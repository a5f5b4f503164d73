/** The evaluation report as text for a terminal (`evalctl report`, `evalctl rescore`). */
import type { ScorerReport, RunReport } from '../store/report.js';
import { describeRunModel } from '../store/run-models.js';
import { shownStderr } from '../store/aggregate.js';

const f3 = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : v.toFixed(3));
const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
const quote = (s: unknown, max = 60): string => {
  const t = s === null || s === undefined ? '—' : typeof s === 'string' ? s : JSON.stringify(s);
  const one = t.replace(/\s+/g, ' ');
  return JSON.stringify(one.length > max ? `${one.slice(0, max - 1)}…` : one);
};

function table(rows: string[][], indent = '  '): string[] {
  const widths = rows[0]!.map((_c, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  // Numbers right-aligned, text left-aligned.
  const pad = (c: string, w: number): string => (/^[-+\d.,%±—]+$/.test(c) ? c.padStart(w) : c.padEnd(w));
  return rows.map(
    (r) =>
      indent +
      r
        .map((c, i) => pad(c, widths[i]!))
        .join('  ')
        .trimEnd(),
  );
}

function scorerLines(s: ScorerReport): string[] {
  const name = `${s.scorer}${s.rescored ? ' (rescored)' : ''}${s.config ? ` ${JSON.stringify(s.config)}` : ''}`;
  const lines = [
    `Scorer ${name}: mean ${f3(s.mean)} ± ${f3(s.stderr)}, correct ${s.correct}/${s.count}` +
      `${s.accuracy === null ? '' : ` (${pct(s.accuracy)})`}`,
  ];
  if (s.unanswered > 0) lines.push(`  unanswered ${s.unanswered} of ${s.count}: counted as wrong (score 0)`);
  const c = s.classification;
  if (c) {
    lines.push(`  accuracy ${pct(c.accuracy)} over ${c.count}, macro F1 ${f3(c.macroF1)}`);
    lines.push(
      ...table([
        ['class', 'precision', 'recall', 'f1', 'support'],
        ...c.perClass.map((k) => [k.label, f3(k.precision), f3(k.recall), f3(k.f1), String(k.support)]),
      ]),
    );
    lines.push('  confusion matrix (rows: target, columns: predicted)');
    lines.push(
      ...table([['', ...c.confusion.predicted], ...c.confusion.labels.map((l, i) => [l, ...c.confusion.matrix[i]!.map(String)])], '    '),
    );
  }
  return lines;
}

export function renderReport(r: RunReport): string {
  const out: string[] = [`Run ${r.runId} · ${r.graphName} · ${r.status} · ${r.episodesDone}/${r.episodeCount} episodes`];
  if (r.error) out.push(`${r.error.code}: ${r.error.message}`);
  out.push('');
  if (r.models?.length) {
    out.push('Models');
    for (const m of r.models) {
      out.push(`  ${describeRunModel(m)}`);
      if (m.repeatsNote) out.push(`    repeats: ${m.repeatsNote}`);
    }
    out.push('');
  }
  if (r.metrics.length) {
    out.push('Metrics (mean ± stderr, n)');
    out.push(
      ...table(
        r.metrics.map((m) => {
          const extra = m as unknown as Record<string, unknown>;
          const ci =
            typeof extra.ci95Low === 'number' && typeof extra.ci95High === 'number'
              ? `95% CI [${f3(extra.ci95Low)}, ${f3(extra.ci95High)}]`
              : '';
          return [m.name, f3(m.mean), '±', f3(shownStderr(m)), `n=${m.count}`, ci];
        }),
      ),
    );
    out.push('');
  }
  out.push('Endings');
  out.push(...table(r.endings.map((e) => [e.status, String(e.count), pct(e.rate)])));
  out.push(
    `Infrastructure failures: ${r.infrastructureFailures.count} (${pct(r.infrastructureFailures.rate)}) · failed: ${r.failed} · ` +
      `model-call retries: ${r.retried.retries} in ${r.retried.episodes} episode(s)`,
    '',
  );
  for (const s of r.scorers) out.push(...scorerLines(s), '');
  for (const [title, list] of [
    ['Worst episodes', r.worst],
    ['Best episodes', r.best],
  ] as const) {
    if (list.length === 0) continue;
    out.push(title);
    out.push(
      ...table(list.map((e) => [`#${e.index}`, e.episodeId, f3(e.score), `answer ${quote(e.answer)}`, `target ${quote(e.target)}`])),
    );
    out.push('');
  }
  if (r.perEpisode.length) {
    out.push('Per episode (mean, total)');
    out.push(...table(r.perEpisode.map((c) => [c.metric, c.mean.toFixed(1), String(Math.round(c.total))])));
  }
  if (r.retriedEpisodes?.length) {
    out.push('', `Retried episodes (the run is on attempt ${r.attempt ?? 1})`);
    out.push(
      ...table(
        r.retriedEpisodes.map((e) => [
          `#${e.index}`,
          e.episodeId ?? '',
          `${e.status ?? 'not played yet'} in attempt ${e.attempt}`,
          `earlier: ${e.earlier.map((x) => `${x.ending ?? 'never ran'} (attempt ${x.attempt})`).join(', ')}`,
        ]),
      ),
    );
  }
  return out.join('\n').trimEnd() + '\n';
}
