/**
 * Runs side by side: candidates against a baseline, paired by episode. A table of every metric's
 * difference with its paired and unpaired 95 % intervals, a forest plot per metric, and the
 * episodes whose 0/1 outcome flipped, both records side by side; the gate's pass / fail /
 * inconclusive per requirement, from anytime-valid intervals. The address is the comparison:
 * `#/compare?baseline=<id>&candidates=<id>,<id>` can be shared.
 */
import { useMemo, useState } from 'react';
import { withToken } from '../api/client.js';
import {
  COMPARE_RUNS,
  type CandidateComparison,
  type CompareRun,
  type Comparison,
  FLIP_PAIR,
  GATE,
  type GateResult,
  type MetricComparison,
} from '../api/compareQueries.js';
import { ForestPlot } from '../charts/ForestPlot.js';
import { RunEndings } from '../components/RunEndings.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { href, navigate } from '../hooks/useHashRoute.js';
import { useQuery } from '../hooks/useQuery.js';
import { PROBLEM_COLOR, problemCount } from '../lib/endings.js';
import { fmtMetricValue, fmtNumber } from '../lib/format.js';
import { metricsOf } from '../lib/metrics.js';
import { configDiffs } from '../lib/runConfig.js';

const FLIPS_PAGE = 10;

export function ComparePage({ baseline, candidates }: { baseline: string | null; candidates: string[] }) {
  if (!baseline || candidates.length === 0)
    return (
      <div className="page">
        <header className="page-head">
          <h1>Compare runs</h1>
        </header>
        <Empty>
          Tick two or more runs in the <a href={href.runs()}>runs list</a> and press Compare. The oldest becomes the baseline.
        </Empty>
      </div>
    );
  return <ComparisonView baseline={baseline} candidates={candidates} />;
}

const runLabel = (r: { id: string; name?: string | null }) => r.name ?? r.id;

function ComparisonView({ baseline, candidates }: { baseline: string; candidates: string[] }) {
  const q = useQuery(COMPARE_RUNS, { baseline, candidates });
  const c = q.data?.compareRuns;
  if (!c) {
    if (q.error) return <ErrorBox error={q.error} title="The runs could not be compared" onRetry={q.refetch} />;
    return <Loading what="Comparing runs" />;
  }
  return (
    <div className="page compare-page" data-testid="compare-page">
      <header className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.runs()}>Runs</a> /
          </div>
          <h1>Compare runs</h1>
          <p className="subtitle">
            {c.candidates.length} candidate{c.candidates.length === 1 ? '' : 's'} against the baseline, paired by episode; 95 % intervals;
            Benjamini–Hochberg flags at a false discovery rate of {fmtNumber(c.fdrLevel)}.
          </p>
        </div>
        <ShareLink />
      </header>
      <RunsPanel comparison={c} />
      <MetricsPanel comparison={c} />
      <GatePanel comparison={c} />
      <ForestPanel comparison={c} />
      <FlipsPanel comparison={c} />
    </div>
  );
}

function ShareLink() {
  const [copied, setCopied] = useState(false);
  const url = location.href;
  return (
    <div className="share-link">
      <label>
        <span className="sr-only">Link to this comparison</span>
        <input readOnly value={url} onFocus={(e) => e.target.select()} data-testid="share-link" />
      </label>
      <button
        type="button"
        className="small"
        onClick={() =>
          void navigator.clipboard?.writeText(url).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy link'}
      </button>
    </div>
  );
}

function RunsPanel({ comparison: c }: { comparison: Comparison }) {
  const runs: Array<{ run: CompareRun; cand: CandidateComparison | null }> = [
    { run: c.baseline, cand: null },
    ...c.candidates.map((cand) => ({ run: cand.candidate, cand })),
  ];
  const diffs = configDiffs(runs.map((r) => r.run));
  const others = (id: string) => [c.baseline.id, ...c.candidates.map((x) => x.candidate.id)].filter((x) => x !== id);
  return (
    <section className="panel table-wrap">
      <h2>Runs</h2>
      <table className="grid compact" data-testid="compare-runs">
        <thead>
          <tr>
            <th>role</th>
            <th>run</th>
            <th>status</th>
            <th>graph</th>
            <th>config that differs</th>
            <th>episodes shared</th>
            <th>
              <span className="sr-only">actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map(({ run, cand }) => (
            <tr key={run.id} data-run-id={run.id}>
              <td>{cand ? 'candidate' : <b>baseline</b>}</td>
              <td>
                <a href={href.run(run.id)} className={run.name ? 'run-name' : 'mono'}>
                  {runLabel(run)}
                </a>
                {run.name && <div className="mono muted small">{run.id}</div>}
              </td>
              <td>
                <StatusBadge status={run.status} color={problemCount(run.statusCounts) > 0 ? PROBLEM_COLOR : undefined} />
                <RunEndings counts={run.statusCounts} />
              </td>
              <td>{run.graphName}</td>
              <td>
                <div className="config-cell">
                  {(diffs.get(run.id) ?? []).map((d) => (
                    <span key={d.key} className="config-chip">
                      {d.label}=<b>{d.text}</b>
                    </span>
                  ))}
                </div>
              </td>
              <td>
                {cand ? (
                  <>
                    {cand.overlap} of {cand.baselineEpisodes}
                    {cand.partial && <div className="warn-chip">{cand.note ?? 'compared on the overlap only'}</div>}
                    {cand.warnings.map((w) => (
                      <div key={w} className="warn-chip">
                        differs beyond config: {w}
                      </div>
                    ))}
                  </>
                ) : (
                  '–'
                )}
              </td>
              <td>
                {cand && (
                  <button type="button" className="small" onClick={() => navigate(href.compare(run.id, others(run.id)))}>
                    Make baseline
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

const ci = (lo: number | null | undefined, hi: number | null | undefined) =>
  lo == null || hi == null ? '–' : `[${fmtNumber(lo)}, ${fmtNumber(hi)}]`;

function pLabel(m: MetricComparison): string {
  if (m.pValue == null) return '–';
  const p = m.pValue < 0.001 ? '<0.001' : fmtNumber(m.pValue, 2);
  const test: Record<string, string> = {
    PAIRED_T: 'paired t',
    CLUSTERED_T: 'clustered paired t',
    MCNEMAR_EXACT: 'McNemar',
    MCNEMAR_CLUSTERED: 'clustered McNemar',
  };
  return `${p} (${test[m.testMethod] ?? 'paired t'})`;
}

function MetricsPanel({ comparison: c }: { comparison: Comparison }) {
  const many = c.candidates.length > 1;
  return (
    <section className="panel table-wrap">
      <h2>Metrics</h2>
      <p className="muted small">
        Difference = candidate − baseline over the episodes both runs count for the metric. The paired interval uses the per-episode
        differences (clustered where episodes carry clusters); the unpaired one treats the runs as unrelated, for contrast.
      </p>
      <table className="grid compact" data-testid="compare-metrics">
        <thead>
          <tr>
            <th>metric</th>
            {many && <th>candidate</th>}
            <th className="num">baseline</th>
            <th className="num">candidate</th>
            <th className="num">difference</th>
            <th>paired 95 % CI</th>
            <th>unpaired 95 % CI</th>
            <th className="num">pairs</th>
            <th
              className="num"
              title="Pairs where the candidate is better / equal / worse by the metric's goal (higher when it declares none)"
            >
              win / tie / loss
            </th>
            <th>p</th>
            <th title="Flagged by Benjamini–Hochberg over every metric × candidate">BH</th>
            <th className="num" title="Minimum detectable effect at this n (α 0.05, 80 % power)">
              MDE
            </th>
          </tr>
        </thead>
        <tbody>
          {c.metrics.flatMap((metric) =>
            c.candidates.map((cand) => {
              const m = cand.metrics.find((x) => x.metric === metric);
              if (!m) return null;
              return (
                <tr key={`${metric}:${cand.candidate.id}`} data-metric={metric} data-candidate={cand.candidate.id}>
                  <td>
                    {metric}
                    {m.goal === 'MAX' && (
                      <span className="muted small" title="higher is better">
                        {' '}
                        ↑
                      </span>
                    )}
                    {m.goal === 'MIN' && (
                      <span className="muted small" title="lower is better">
                        {' '}
                        ↓
                      </span>
                    )}
                  </td>
                  {many && <td>{runLabel(cand.candidate)}</td>}
                  <td className="num">{fmtNumber(m.baselineMean)}</td>
                  <td className="num">{fmtNumber(m.candidateMean)}</td>
                  <td
                    className={
                      m.verdict === 'BETTER' ? 'num better' : m.verdict === 'WORSE' ? 'num worse' : m.bhSignificant ? 'num sig' : 'num'
                    }
                    data-verdict={m.verdict ?? undefined}
                    title={verdictTitle(m.verdict, m.goal)}
                  >
                    {fmtNumber(m.meanDiff)}
                    {m.verdict === 'BETTER' && <span className="sr-only"> (better)</span>}
                    {m.verdict === 'WORSE' && <span className="sr-only"> (worse)</span>}
                  </td>
                  <td data-testid="paired-ci">
                    {ci(m.ci95Low, m.ci95High)}
                    {m.ciMethod === 'CLUSTERED_T' && m.clusters != null && <span className="muted small"> · {m.clusters} clusters</span>}
                  </td>
                  <td className="muted">{ci(m.unpairedCi95Low, m.unpairedCi95High)}</td>
                  <td
                    className="num"
                    title={m.excludedPairs > 0 ? `${m.excludedPairs} shared episodes left out (their endings do not count)` : undefined}
                  >
                    {m.n}
                    {m.excludedPairs > 0 && <span className="muted small"> (+{m.excludedPairs} left out)</span>}
                  </td>
                  <td className="num">
                    {m.wins} / {m.ties} / {m.losses}
                  </td>
                  <td>{pLabel(m)}</td>
                  <td className={m.bhSignificant ? 'sig' : 'muted'}>{m.bhSignificant ? 'yes' : 'no'}</td>
                  <td className="num">{fmtNumber(m.mde)}</td>
                </tr>
              );
            }),
          )}
        </tbody>
      </table>
    </section>
  );
}

/** Requirements as typed: comma-separated bounds on candidate − baseline. */
const requirementsOf = (text: string): string[] =>
  text
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');

function GatePanel({ comparison: c }: { comparison: Comparison }) {
  const [draft, setDraft] = useState('');
  const [applied, setApplied] = useState<string[]>([]);
  return (
    <section className="panel table-wrap" data-testid="gate-panel">
      <h2>Gate</h2>
      <p className="muted small">
        Pass, fail or inconclusive per requirement, from intervals that stay valid however often the comparison is watched (pairs read in
        episode order; Holm over the metrics): what <code>evalctl gate</code> exits on. A requirement bounds candidate − baseline:{' '}
        <code>success &gt;= -0.02</code>, <code>steps &lt;= 2</code>, <code>|success| &lt;= 0.02</code>. Empty: every metric with a goal
        must beat the baseline.
      </p>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(requirementsOf(draft));
        }}
      >
        <label>
          Requirements{' '}
          <input
            name="gate-requirements"
            value={draft}
            placeholder="success >= -0.02, |steps| <= 2"
            onChange={(e) => setDraft(e.target.value)}
          />
        </label>{' '}
        <button type="submit">Apply</button>
      </form>
      {c.candidates.map((cand) => (
        <GateTable
          key={cand.candidate.id}
          baseline={c.baseline.id}
          candidate={cand.candidate.id}
          label={c.candidates.length > 1 ? runLabel(cand.candidate) : null}
          requirements={applied}
        />
      ))}
    </section>
  );
}

const VERDICT_CLASS: Record<string, string> = { PASS: 'better', FAIL: 'worse', INCONCLUSIVE: 'muted' };

function GateTable(props: { baseline: string; candidate: string; label: string | null; requirements: string[] }) {
  const q = useQuery(GATE, {
    baseline: props.baseline,
    candidate: props.candidate,
    requirements: props.requirements.length > 0 ? props.requirements : null,
  });
  const g: GateResult | undefined = q.data?.gate;
  if (!g) {
    // A requirement that cannot be read, or runs with no goal to gate on, is said in a line: the rest of the page stands.
    if (q.error)
      return (
        <p className="small" role="alert" data-testid="gate-error">
          {q.error.message}
        </p>
      );
    return <p className="muted small">Judging…</p>;
  }
  return (
    <div data-testid="gate" data-candidate={props.candidate} data-verdict={g.verdict}>
      <p>
        {props.label && <>{props.label}: </>}
        <strong className={VERDICT_CLASS[g.verdict]}>{g.verdict.toLowerCase()}</strong>{' '}
        <span className="muted small">
          (α = {fmtNumber(g.alpha)}, {g.correction} over {g.metrics.length} metric{g.metrics.length === 1 ? '' : 's'})
        </span>
      </p>
      <table className="grid compact" data-testid="gate-metrics">
        <thead>
          <tr>
            <th>metric</th>
            <th>requirement</th>
            <th>verdict</th>
            <th className="num">difference</th>
            <th title="Valid however often the comparison was watched, at the level Holm gave the metric">anytime interval</th>
            <th className="num" title="The pair, in episode order, at which the verdict was reached">
              decided at
            </th>
            <th className="num" title="Fixed-n minimum detectable effect at this n (80 % power)">
              MDE
            </th>
            <th className="num" title="Episodes a fixed-n plan would need to tell the difference from the bound (80 % power)">
              episodes needed
            </th>
          </tr>
        </thead>
        <tbody>
          {g.metrics.map((m) => (
            <tr key={m.metric} data-metric={m.metric} data-verdict={m.verdict} title={m.reason}>
              <td>{m.metric}</td>
              <td>
                <code>{m.requirement}</code>
              </td>
              <td className={VERDICT_CLASS[m.verdict]}>{m.verdict.toLowerCase()}</td>
              <td className="num">{fmtNumber(m.meanDiff)}</td>
              <td>
                {ci(m.intervalLow, m.intervalHigh)}{' '}
                <span className="muted small">
                  {fmtNumber(100 * (1 - m.level))} % · {m.method.toLowerCase()}
                </span>
              </td>
              <td className="num">{m.decidedAt ?? '–'}</td>
              <td className="num">{fmtNumber(m.mde)}</td>
              <td className="num">{m.episodesNeeded ?? '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {g.notes.map((n) => (
        <p key={n} className="muted small">
          {n}
        </p>
      ))}
    </div>
  );
}

function ForestPanel({ comparison: c }: { comparison: Comparison }) {
  return (
    <section className="panel">
      <h2>Differences</h2>
      <p className="muted small">
        Candidate − baseline per metric: the thick bar is the paired 95 % interval with the mean difference on it, the thin line below the
        unpaired interval, the dashed line zero. Orange: flagged by Benjamini–Hochberg.
      </p>
      <div className="forest-grid-wrap">
        {c.metrics.map((metric) => (
          <figure key={metric} data-metric={metric}>
            <figcaption>{metric}</figcaption>
            <ForestPlot
              title={`Difference in ${metric}, candidate − baseline`}
              rows={c.candidates.flatMap((cand) => {
                const m = cand.metrics.find((x) => x.metric === metric);
                return m
                  ? [
                      {
                        key: cand.candidate.id,
                        label: runLabel(cand.candidate),
                        diff: m.meanDiff ?? null,
                        low: m.ci95Low ?? null,
                        high: m.ci95High ?? null,
                        unpairedLow: m.unpairedCi95Low ?? null,
                        unpairedHigh: m.unpairedCi95High ?? null,
                        significant: m.bhSignificant,
                      },
                    ]
                  : [];
              })}
            />
          </figure>
        ))}
      </div>
    </section>
  );
}

function FlipsPanel({ comparison: c }: { comparison: Comparison }) {
  const binary = useMemo(() => c.metrics.filter((m) => c.candidates.some((x) => x.metrics.some((y) => y.metric === m && y.binary))), [c]);
  const [metric, setMetric] = useState(() => (binary.includes('success') ? 'success' : (binary[0] ?? '')));
  const [candId, setCandId] = useState(c.candidates[0]?.candidate.id ?? '');
  const [direction, setDirection] = useState<'' | 'LOST' | 'GAINED'>('');
  const [page, setPage] = useState(0);
  const cand = c.candidates.find((x) => x.candidate.id === candId) ?? c.candidates[0];
  const m = cand?.metrics.find((x) => x.metric === metric);
  const flips = (m?.flips ?? []).filter((f) => !direction || f.direction === direction);
  const lost = m?.flips.filter((f) => f.direction === 'LOST').length ?? 0;
  const gained = (m?.flips.length ?? 0) - lost;
  if (binary.length === 0 || !cand)
    return (
      <section className="panel">
        <h2>Flipped episodes</h2>
        <Empty>No 0/1 metric to flip: flipped episodes are listed for metrics such as success.</Empty>
      </section>
    );
  const shown = flips.slice(page * FLIPS_PAGE, (page + 1) * FLIPS_PAGE);
  return (
    <section className="panel" data-testid="flips">
      <div className="panel-head">
        <h2>Flipped episodes</h2>
        <div className="filters">
          <label>
            Metric{' '}
            <select
              name="flip-metric"
              value={metric}
              onChange={(e) => {
                setMetric(e.target.value);
                setPage(0);
              }}
            >
              {binary.map((b) => (
                <option key={b}>{b}</option>
              ))}
            </select>
          </label>
          {c.candidates.length > 1 && (
            <label>
              Candidate{' '}
              <select
                name="flip-candidate"
                value={cand.candidate.id}
                onChange={(e) => {
                  setCandId(e.target.value);
                  setPage(0);
                }}
              >
                {c.candidates.map((x) => (
                  <option key={x.candidate.id} value={x.candidate.id}>
                    {runLabel(x.candidate)}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label>
            Direction{' '}
            <select
              name="flip-direction"
              value={direction}
              onChange={(e) => {
                setDirection(e.target.value as '' | 'LOST' | 'GAINED');
                setPage(0);
              }}
            >
              <option value="">both ({lost + gained})</option>
              <option value="LOST">baseline ✓ candidate ✗ ({lost})</option>
              <option value="GAINED">baseline ✗ candidate ✓ ({gained})</option>
            </select>
          </label>
        </div>
      </div>
      {flips.length === 0 ? (
        <Empty>No episode flipped {metric} between these runs.</Empty>
      ) : (
        <div className="flip-list" data-testid="flip-list" data-flips={flips.length}>
          {shown.map((f) => (
            <FlipPair
              key={`${f.baselineIndex}:${f.candidateIndex}`}
              metric={metric}
              flip={f}
              baseline={c.baseline}
              candidate={cand.candidate}
            />
          ))}
          {flips.length > FLIPS_PAGE && (
            <div className="pager">
              <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
                ← previous
              </button>
              <span>
                {page * FLIPS_PAGE + 1}–{page * FLIPS_PAGE + shown.length} of {flips.length}
              </span>
              <button type="button" disabled={(page + 1) * FLIPS_PAGE >= flips.length} onClick={() => setPage(page + 1)}>
                next →
              </button>
            </div>
          )}
        </div>
      )}
    </section>
  );
}

type Flip = CandidateComparison['metrics'][number]['flips'][number];

function FlipPair({ flip, metric, baseline, candidate }: { flip: Flip; metric: string; baseline: CompareRun; candidate: CompareRun }) {
  const q = useQuery(FLIP_PAIR, { a: baseline.id, ai: flip.baselineIndex, b: candidate.id, bi: flip.candidateIndex });
  const sides = [
    { role: 'baseline', run: baseline, index: flip.baselineIndex, value: flip.baselineValue, ep: q.data?.a?.episode ?? null },
    { role: 'candidate', run: candidate, index: flip.candidateIndex, value: flip.candidateValue, ep: q.data?.b?.episode ?? null },
  ];
  return (
    <article className="flip-pair" data-testid="flip-pair" data-direction={flip.direction}>
      <h4>
        {flip.episodeId} · {flip.direction === 'LOST' ? 'baseline ✓ candidate ✗' : 'baseline ✗ candidate ✓'}
      </h4>
      {sides.map((s) => (
        <div key={s.role} className="flip-side">
          <div>
            {s.role}{' '}
            <a href={href.episode(s.run.id, s.index)} data-testid={`flip-${s.role}-link`}>
              {runLabel(s.run)} · episode {s.index}
            </a>
          </div>
          <div>
            {metric} <span className="value">{fmtNumber(s.value)}</span>
            {s.ep && (
              <span className="muted small">
                {' '}
                · {s.ep.status.toLowerCase().replace(/_/g, ' ')} · {s.ep.steps} steps
                {Object.entries(metricsOf(s.ep.metrics))
                  .filter(([k]) => k !== metric)
                  .slice(0, 3)
                  .map(([k, v]) => ` · ${k} ${fmtMetricValue(v)}`)
                  .join('')}
              </span>
            )}
          </div>
          {q.error && !q.data ? (
            <span className="muted small">the record could not be loaded</span>
          ) : s.ep && !s.ep.assets.some((a) => a.mime.startsWith('image/')) ? (
            <span className="muted small">no picture</span>
          ) : (
            s.ep?.assets
              .filter((a) => a.mime.startsWith('image/'))
              .slice(0, 1)
              .map((a) => (
                <a key={a.name} href={href.episode(s.run.id, s.index)}>
                  <img src={withToken(a.url)} alt={`${a.name} of ${s.role} episode ${s.index}`} loading="lazy" />
                </a>
              ))
          )}
        </div>
      ))}
    </article>
  );
}

/** The difference cell's tooltip: what its colour says. */
function verdictTitle(verdict: string | null | undefined, goal: string | null | undefined): string | undefined {
  const way = goal === 'MIN' ? 'lower is better' : goal === 'MAX' ? 'higher is better' : undefined;
  if (verdict === 'BETTER') return `better: the paired interval lies on the better side of 0 (${way})`;
  if (verdict === 'WORSE') return `worse: the paired interval lies on the worse side of 0 (${way})`;
  if (verdict === 'NO_DIFFERENCE') return `no difference shown at this n (${way})`;
  return undefined;
}
