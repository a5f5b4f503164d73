/** The run page's report section (Run.report): error bars, endings, scorers, classification, extremes, cost per episode. */
import { useEffect, useRef } from 'react';
import { RUN_REPORT } from '../api/queries.js';
import { href } from '../hooks/useHashRoute.js';
import { useQuery } from '../hooks/useQuery.js';
import { fmtDuration, fmtNumber, titleCase } from '../lib/format.js';
import { type ReportClassification, type ReportEpisode, type ReportMetric, readReport, type RunReportView } from '../lib/report.js';
import { ErrorBox } from './States.js';

const pct = (x: number | null): string => (x == null ? '–' : `${fmtNumber(100 * x, 3)} %`);

/** Absent until the run has a report; asked again whenever the run's status changes (it is written at the end). */
export function RunReportSection({ runId, status }: { runId: string; status: string }) {
  const q = useQuery(RUN_REPORT, { id: runId });
  const { refetch } = q;
  const seen = useRef(status);
  useEffect(() => {
    if (seen.current === status) return;
    seen.current = status;
    refetch();
  }, [status, refetch]);
  const report = readReport(q.data?.run?.report);
  if (q.error && !q.data) return <ErrorBox error={q.error} title="The report could not be loaded" onRetry={q.refetch} />;
  if (!report) return null;
  return <RunReport runId={runId} report={report} />;
}

export function RunReport({ runId, report }: { runId: string; report: RunReportView }) {
  const primary = report.scorers[0];
  return (
    <section className="panel report" data-testid="run-report">
      <h2>Report</h2>
      <div className="progress-facts">
        {primary && (
          <span data-testid="report-accuracy">
            {primary.scorer} accuracy <b>{pct(primary.accuracy)}</b> over <b>{primary.count}</b> counted episode
            {primary.count === 1 ? '' : 's'}
            {primary.unanswered ? ` (${primary.unanswered} unanswered, counted as wrong)` : ''}
          </span>
        )}
        {report.infra && (
          <span data-testid="report-infra">
            infrastructure failures <b>{report.infra.count}</b> ({pct(report.infra.rate)}), left out of the scores
          </span>
        )}
        {report.failed != null && report.failed > 0 && (
          <span>
            failed episodes <b>{report.failed}</b>
          </span>
        )}
        {report.retried && report.retried.retries > 0 && (
          <span>
            {report.retried.retries} model-call retr{report.retried.retries === 1 ? 'y' : 'ies'} in {report.retried.episodes} episode
            {report.retried.episodes === 1 ? '' : 's'}
          </span>
        )}
      </div>

      {report.metrics.length > 0 && (
        <>
          <h3>Metrics</h3>
          <MetricTable metrics={report.metrics} />
        </>
      )}

      {report.scorers.length > 0 && (
        <>
          <h3>Scorers</h3>
          <table className="grid compact" data-testid="report-scorers">
            <thead>
              <tr>
                <th>scorer</th>
                <th className="num">mean</th>
                <th className="num">accuracy</th>
                <th className="num">correct</th>
                <th className="num">scored</th>
                <th className="num">no answer</th>
              </tr>
            </thead>
            <tbody>
              {report.scorers.map((s) => (
                <tr key={s.key}>
                  <th className="mono">
                    {s.scorer}
                    {s.rescored && <span className="muted small"> (rescored)</span>}
                  </th>
                  <td className="num">
                    {fmtNumber(s.mean)}
                    {s.stderr != null && <span className="muted"> ± {fmtNumber(s.stderr, 2)}</span>}
                  </td>
                  <td className="num">{pct(s.accuracy)}</td>
                  <td className="num">{s.correct ?? '–'}</td>
                  <td className="num">{s.count}</td>
                  <td className="num">{s.unanswered ?? '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {report.scorers.map((s) => (s.classification ? <Classification key={s.key} scorer={s.scorer} c={s.classification} /> : null))}
        </>
      )}

      {(report.worst.length > 0 || report.best.length > 0) && (
        <div className="report-extremes">
          <Extremes title="Top failures" testId="report-worst" runId={runId} episodes={report.worst} />
          <Extremes title="Top successes" testId="report-best" runId={runId} episodes={report.best} />
        </div>
      )}

      <div className="report-extremes">
        {report.endings.length > 0 && (
          <div>
            <h3>Endings</h3>
            <table className="grid compact" data-testid="report-endings">
              <tbody>
                {report.endings.map((e) => (
                  <tr key={e.status}>
                    <th>{titleCase(e.status)}</th>
                    <td className="num">{e.count}</td>
                    <td className="num">{pct(e.rate)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {report.perEpisode.length > 0 && (
          <div>
            <h3>Per episode</h3>
            <table className="grid compact" data-testid="report-costs">
              <thead>
                <tr>
                  <th />
                  <th className="num">mean</th>
                  <th className="num">total</th>
                </tr>
              </thead>
              <tbody>
                {report.perEpisode.map((c) => (
                  <tr key={c.metric}>
                    <th className="mono">{c.metric}</th>
                    <td className="num">{isTime(c.metric) ? fmtDuration(c.mean) : fmtNumber(c.mean)}</td>
                    <td className="num">{isTime(c.metric) ? fmtDuration(c.total) : fmtNumber(c.total)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </section>
  );
}

const isTime = (metric: string): boolean => /(_ms|Ms)$/.test(metric);

function MetricTable({ metrics }: { metrics: ReportMetric[] }) {
  return (
    <div className="table-wrap">
      <table className="grid compact" data-testid="report-metrics">
        <thead>
          <tr>
            <th>metric</th>
            <th className="num">mean</th>
            <th className="num">95 % interval</th>
            <th>error bar</th>
            <th className="num">n</th>
          </tr>
        </thead>
        <tbody>
          {metrics.map((m) => (
            <tr key={m.name}>
              <th className="mono">{m.name}</th>
              <td className="num">
                {fmtNumber(m.mean)}
                {m.stderr != null && <span className="muted"> ± {fmtNumber(m.stderr, 2)}</span>}
              </td>
              <td className="num" title={m.method ? `method: ${m.method}` : undefined}>
                {m.low != null && m.high != null ? `${fmtNumber(m.low)} … ${fmtNumber(m.high)}` : '–'}
              </td>
              <td>
                <ErrorBar m={m} />
              </td>
              <td className="num">{m.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The interval over the metric's range (min…max, widened to hold the interval); the dot is the mean. */
function ErrorBar({ m }: { m: ReportMetric }) {
  const lo = Math.min(...[m.min, m.low, m.mean].filter((x): x is number => x != null));
  const hi = Math.max(...[m.max, m.high, m.mean].filter((x): x is number => x != null));
  const w = 120;
  const x = (v: number): number => (hi === lo ? w / 2 : 4 + ((v - lo) / (hi - lo)) * (w - 8));
  return (
    <svg width={w} height={12} role="img" aria-label={`${m.name}: mean ${fmtNumber(m.mean)}`} className="error-bar">
      <line x1={4} x2={w - 4} y1={6} y2={6} className="error-bar-range" />
      {m.low != null && m.high != null && (
        <>
          <line x1={x(m.low)} x2={x(m.high)} y1={6} y2={6} className="error-bar-ci" />
          <line x1={x(m.low)} x2={x(m.low)} y1={2} y2={10} className="error-bar-ci" />
          <line x1={x(m.high)} x2={x(m.high)} y1={2} y2={10} className="error-bar-ci" />
        </>
      )}
      <circle cx={x(m.mean)} cy={6} r={3} className="error-bar-mean" />
    </svg>
  );
}

function Classification({ scorer, c }: { scorer: string; c: ReportClassification }) {
  const max = Math.max(1, ...(c.confusion?.matrix.flat() ?? [1]));
  return (
    <div className="report-classification" data-testid="report-classification">
      <h3>
        Classes{' '}
        <span className="muted small">
          ({scorer}: accuracy {pct(c.accuracy)}, macro F1 {fmtNumber(c.macroF1)}, n = {c.count})
        </span>
      </h3>
      <div className="report-extremes">
        <table className="grid compact" data-testid="report-per-class">
          <thead>
            <tr>
              <th>class</th>
              <th className="num">precision</th>
              <th className="num">recall</th>
              <th className="num">F1</th>
              <th className="num">support</th>
            </tr>
          </thead>
          <tbody>
            {c.perClass.map((p) => (
              <tr key={p.label}>
                <th className="mono">{p.label}</th>
                <td className="num">{fmtNumber(p.precision)}</td>
                <td className="num">{fmtNumber(p.recall)}</td>
                <td className="num">{fmtNumber(p.f1)}</td>
                <td className="num">{p.support}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {c.confusion && (
          <table className="grid compact confusion" data-testid="confusion-matrix">
            <caption className="muted small">rows: true class · columns: predicted</caption>
            <thead>
              <tr>
                <th />
                {c.confusion.predicted.map((p) => (
                  <th key={p} className="num mono" scope="col">
                    {p}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {c.confusion.labels.map((label, r) => (
                <tr key={label}>
                  <th className="mono" scope="row">
                    {label}
                  </th>
                  {c.confusion!.predicted.map((p, col) => {
                    const n = c.confusion!.matrix[r]?.[col] ?? 0;
                    const diagonal = p === label;
                    return (
                      <td
                        key={p}
                        className={`num${diagonal ? ' confusion-diag' : ''}`}
                        style={{ '--share': `${Math.round((55 * n) / max)}%` } as React.CSSProperties}
                      >
                        {n}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  );
}

function Extremes({ title, testId, runId, episodes }: { title: string; testId: string; runId: string; episodes: ReportEpisode[] }) {
  return (
    <div>
      <h3>{title}</h3>
      {episodes.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <table className="grid compact" data-testid={testId}>
          <thead>
            <tr>
              <th className="num">#</th>
              <th>sample</th>
              <th className="num">score</th>
              <th>answer</th>
              <th>target</th>
            </tr>
          </thead>
          <tbody>
            {episodes.map((e) => (
              <tr key={e.index} title={e.explanation || undefined}>
                <td className="num">
                  <a href={href.episode(runId, e.index)}>{e.index}</a>
                </td>
                <td className="mono small">{e.episodeId}</td>
                <td className="num">{fmtNumber(e.score)}</td>
                <td className="mono small">{e.extracted ?? e.answer ?? '–'}</td>
                <td className="mono small">{e.target ?? '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
