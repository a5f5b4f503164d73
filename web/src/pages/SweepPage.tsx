/**
 * One sweep: a row per config of its grid (runs pooled over its seeds) with every metric's 95 %
 * interval and its paired difference against the baseline config, a forest plot of those
 * differences, links to each run and to the compare page; cancel the whole sweep while it runs.
 */
import { useState } from 'react';
import { gql } from '../api/client.js';
import { CANCEL_SWEEP, SWEEP, type SweepResult } from '../api/compareQueries.js';
import { ForestPlot } from '../charts/ForestPlot.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { href } from '../hooks/useHashRoute.js';
import { useQuery } from '../hooks/useQuery.js';
import { fmtNumber, fmtTime } from '../lib/format.js';
import { isLiveRun } from '../lib/statuses.js';

const ci = (lo: number | null | undefined, hi: number | null | undefined) =>
  lo == null || hi == null ? '' : ` [${fmtNumber(lo)}, ${fmtNumber(hi)}]`;

export function SweepPage({ sweepId }: { sweepId: string }) {
  const [live, setLive] = useState(true);
  const q = useQuery(SWEEP, { id: sweepId }, { pollMs: live ? 2000 : 0 });
  const sweep = q.data?.sweep;
  const stillLive = sweep ? isLiveRun(sweep.status) : true;
  if (live !== stillLive) setLive(stillLive);
  if (!sweep) {
    if (q.error) return <ErrorBox error={q.error} title={`Sweep ${sweepId} could not be loaded`} onRetry={q.refetch} />;
    return <Loading what={`Loading sweep ${sweepId}`} />;
  }
  return <SweepView sweep={sweep} onChanged={q.refetch} />;
}

function SweepView({ sweep, onChanged }: { sweep: SweepResult; onChanged(): void }) {
  const [metric, setMetric] = useState(() => (sweep.metrics.includes('success') ? 'success' : (sweep.metrics[0] ?? '')));
  const [cancelling, setCancelling] = useState(false);
  const baseline = sweep.configs.find((c) => c.isBaseline) ?? sweep.configs[0];
  const baseRun = baseline?.runs[0];
  const candidates = sweep.configs.filter((c) => c !== baseline).flatMap((c) => (c.runs[0] ? [c.runs[0].id] : []));
  const cancel = async () => {
    setCancelling(true);
    try {
      await gql(CANCEL_SWEEP, { id: sweep.id });
    } finally {
      setCancelling(false);
      onChanged();
    }
  };
  return (
    <div className="page sweep-page" data-testid="sweep-page" data-status={sweep.status}>
      <header className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.runs()}>Runs</a> /
          </div>
          <h1>
            <span className="mono">{sweep.id}</span> <StatusBadge status={sweep.status} />
          </h1>
          <p className="subtitle">
            <b>{sweep.graphName}</b> · {sweep.configs.length} configs × {sweep.seeds.length} seed{sweep.seeds.length === 1 ? '' : 's'} (
            {sweep.seeds.join(', ')}) · {sweep.runsFinished} of {sweep.runCount} runs finished · created {fmtTime(sweep.createdAt)}
          </p>
        </div>
        <div className="actions">
          {baseRun && candidates.length > 0 && (
            <a
              className="button"
              href={href.compare(baseRun.id, candidates)}
              title="The first seed's run of each config against the baseline config's"
            >
              Compare runs
            </a>
          )}
          {isLiveRun(sweep.status) && (
            <button type="button" className="danger" disabled={cancelling} onClick={() => void cancel()}>
              Cancel sweep
            </button>
          )}
        </div>
      </header>
      <section className="panel table-wrap">
        <h2>Configs</h2>
        <p className="muted small">
          Each config's runs pooled over its seeds (an episode's value is its mean over the seeds), with the 95 % interval; below it, Δ =
          this config − the baseline config, paired by episode, with its 95 % interval.
        </p>
        <table className="grid compact" data-testid="sweep-table">
          <thead>
            <tr>
              <th>config</th>
              <th>runs</th>
              {sweep.metrics.map((m) => (
                <th key={m}>{m}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {sweep.configs.map((c) => (
              <tr key={c.index} data-config={c.index}>
                <td>
                  <span className="mono">{c.label || '(base)'}</span>
                  {c.isBaseline && <div className="muted small">baseline</div>}
                </td>
                <td>
                  {c.runs.map((r) => (
                    <div key={r.id}>
                      <a href={href.run(r.id)} className="mono small">
                        {r.name ?? r.id}
                      </a>{' '}
                      <StatusBadge status={r.status} />
                    </div>
                  ))}
                </td>
                {sweep.metrics.map((name) => {
                  const m = c.metrics.find((x) => x.name === name);
                  const d = m?.vsBaseline;
                  return (
                    <td key={name} data-metric={name}>
                      {m ? (
                        <>
                          <b>{fmtNumber(m.aggregate.mean)}</b>
                          <span className="muted small">{ci(m.aggregate.ci95Low, m.aggregate.ci95High)}</span>
                          {d && (
                            <div className={d.bhSignificant ? 'sig small' : 'small'}>
                              Δ {fmtNumber(d.meanDiff)}
                              {ci(d.ci95Low, d.ci95High)}
                            </div>
                          )}
                        </>
                      ) : (
                        '–'
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="panel">
        <div className="panel-head">
          <h2>Differences against the baseline config</h2>
          <label>
            Metric{' '}
            <select name="sweep-metric" value={metric} onChange={(e) => setMetric(e.target.value)}>
              {sweep.metrics.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </label>
        </div>
        {sweep.configs.length < 2 ? (
          <Empty>A sweep of one config has nothing to compare.</Empty>
        ) : (
          <ForestPlot
            title={`Difference in ${metric}, config − baseline config`}
            rows={sweep.configs
              .filter((c) => !c.isBaseline)
              .map((c) => {
                const d = c.metrics.find((x) => x.name === metric)?.vsBaseline;
                return {
                  key: String(c.index),
                  label: c.label,
                  diff: d?.meanDiff ?? null,
                  low: d?.ci95Low ?? null,
                  high: d?.ci95High ?? null,
                  unpairedLow: d?.unpairedCi95Low ?? null,
                  unpairedHigh: d?.unpairedCi95High ?? null,
                  significant: d?.bhSignificant ?? false,
                };
              })}
          />
        )}
      </section>
    </div>
  );
}
