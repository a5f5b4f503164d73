/** Every run, newest first, filterable by status and graph, kept live while runs are in flight. */
import { useEffect, useMemo, useState } from 'react';
import { GRAPH_NAMES, QUEUE_CHANGED, RUNS } from '../api/queries.js';
import { ProgressBar } from '../components/ProgressBar.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href, navigate } from '../hooks/useHashRoute.js';
import { useNow } from '../hooks/useNow.js';
import { useQuery } from '../hooks/useQuery.js';
import { useSubscription } from '../hooks/useSubscription.js';
import { useThrottled } from '../hooks/useThrottled.js';
import { elapsedMs, fmtDuration, fmtNumber, fmtTime, titleCase } from '../lib/format.js';
import { headlineMetrics } from '../lib/metrics.js';
import { RUN_STATUSES, isLiveRun, statusColor, type RunStatus } from '../lib/statuses.js';

const PAGE = 50;

export function RunsPage() {
  const [status, setStatus] = useState<RunStatus | ''>('');
  const [graphName, setGraphName] = useState('');
  const [page, setPage] = useState(0);
  useEffect(() => setPage(0), [status, graphName]);

  const vars = { status: status || null, graphName: graphName || null, offset: page * PAGE, first: PAGE };
  const runs = useQuery(RUNS, vars, { keepPrevious: true });
  const graphs = useQuery(GRAPH_NAMES);
  const list = runs.data?.runs.items ?? [];
  const total = runs.data?.runs.total ?? 0;
  const anyLive = list.some((r) => isLiveRun(r.status));
  const now = useNow(anyLive ? 1000 : 0);

  // Queue changes (submit, admit, finish) and progress of running runs arrive as events;
  // a slow poll while something is live covers anything they miss.
  const refetch = useThrottled(runs.refetch, 500);
  useSubscription(QUEUE_CHANGED, {}, { onData: refetch });
  useEffect(() => {
    if (!anyLive) return;
    const t = setInterval(refetch, 2000);
    return () => clearInterval(t);
  }, [anyLive, refetch]);

  const graphNames = useMemo(() => {
    const s = new Set((graphs.data?.graphs ?? []).map((g) => g.name));
    for (const r of list) s.add(r.graphName);
    return [...s].sort();
  }, [graphs.data, list]);

  return (
    <div className="page">
      <header className="page-head">
        <h1>Runs</h1>
        <div className="filters">
          <label>
            Status{' '}
            <select name="status" value={status} onChange={(e) => setStatus(e.target.value as RunStatus | '')}>
              <option value="">any</option>
              {RUN_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {titleCase(s)}
                </option>
              ))}
            </select>
          </label>
          <label>
            Graph{' '}
            <select name="graph" value={graphName} onChange={(e) => setGraphName(e.target.value)}>
              <option value="">any</option>
              {graphNames.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </label>
          <a className="button primary" href={href.newRun()}>
            New run
          </a>
        </div>
      </header>
      {runs.error && !runs.data ? (
        <ErrorBox error={runs.error} title="The runs could not be loaded" onRetry={runs.refetch} />
      ) : runs.loading && !runs.data ? (
        <Loading what="Loading runs" />
      ) : list.length === 0 ? (
        <Empty>
          {status || graphName ? (
            'No run matches these filters.'
          ) : (
            <>
              No runs yet. <a href={href.newRun()}>Start one</a>.
            </>
          )}
        </Empty>
      ) : (
        <div className="panel table-wrap flush">
          <table className="grid runs" data-testid="runs-table">
            <thead>
              <tr>
                <th>run</th>
                <th>status</th>
                <th>graph</th>
                <th className="num">workers</th>
                <th className="progress-col">progress</th>
                <th>headline metrics</th>
                <th className="num">priority</th>
                <th>started</th>
                <th className="num">duration</th>
              </tr>
            </thead>
            <tbody>
              {list.map((r) => (
                <tr key={r.id} className="clickable" onClick={() => navigate(href.run(r.id))} data-run-id={r.id} data-status={r.status}>
                  <td className="mono">
                    <a href={href.run(r.id)} onClick={(e) => e.stopPropagation()}>
                      {r.id}
                    </a>
                  </td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td>{r.graphName}</td>
                  <td className="num">{r.workerCount}</td>
                  <td className="progress-col">
                    <ProgressBar done={r.episodesDone} total={r.episodeCount} color={statusColor(r.status)} />
                  </td>
                  <td className="metrics-cell">
                    {headlineMetrics(r.aggregateMetrics).map((m) => (
                      <span
                        key={m.name}
                        className="metric-chip"
                        title={`${m.name}: mean ${m.mean}${m.stderr != null ? ` ± ${m.stderr}` : ''} (n=${m.count})`}
                      >
                        {m.name} <b>{fmtNumber(m.mean)}</b>
                      </span>
                    ))}
                    {r.aggregateMetrics.length === 0 && <span className="muted">–</span>}
                  </td>
                  <td className="num">{r.priority}</td>
                  <td>{fmtTime(r.startedAt)}</td>
                  <td className="num">{fmtDuration(elapsedMs(r.startedAt, r.finishedAt, now))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {total > PAGE && (
        <div className="pager">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            ← newer
          </button>
          <span>
            {page * PAGE + 1}–{page * PAGE + list.length} of {total}
          </span>
          <button type="button" disabled={(page + 1) * PAGE >= total} onClick={() => setPage(page + 1)}>
            older →
          </button>
        </div>
      )}
    </div>
  );
}
