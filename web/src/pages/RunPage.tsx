/** One run: live progress, aggregates with their error bars, charts, episodes and the episode drawer. */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { RUN, RUN_PROGRESS } from '../api/queries.js';
import type { EpisodeRow, RunDetail } from '../api/fragments.js';
import { HistogramChart } from '../charts/HistogramChart.js';
import { MetricSeriesChart } from '../charts/MetricSeriesChart.js';
import { WorkerTimeline } from '../charts/WorkerTimeline.js';
import { CancelButton } from '../components/CancelButton.js';
import { RetryButton } from '../components/RetryButton.js';
import { EpisodeDrawer } from '../components/EpisodeDrawer.js';
import { EpisodeTable } from '../components/EpisodeTable.js';
import { MetricCards } from '../components/MetricCards.js';
import { RunAbout } from '../components/RunAbout.js';
import { RunModels } from '../components/RunModels.js';
import { RunConcurrency } from '../components/RunConcurrency.js';
import { StopWhenPanel } from '../components/StopWhenPanel.js';
import { RunEndings } from '../components/RunEndings.js';
import { ProgressBar } from '../components/ProgressBar.js';
import { RunReportSection } from '../components/RunReport.js';
import { Reproducibility } from '../components/Reproducibility.js';
import { DeterminismAudit } from '../components/DeterminismAudit.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { RunEndpoints } from '../components/RunEndpoints.js';
import { ShardBands } from '../components/ShardBands.js';
import { TaskTable } from '../components/TaskTable.js';
import { href, navigate } from '../hooks/useHashRoute.js';
import { useNow } from '../hooks/useNow.js';
import { useQuery } from '../hooks/useQuery.js';
import { useRunEpisodes } from '../hooks/useRunEpisodes.js';
import { useSubscription } from '../hooks/useSubscription.js';
import { elapsedMs, fmtDuration, fmtTime, titleCase } from '../lib/format.js';
import { runColor } from '../lib/endings.js';
import { numericMetricNames } from '../lib/metrics.js';
import { EPISODE_STATUSES, episodeStatusColor, isLiveRun } from '../lib/statuses.js';

export function RunPage({ runId, episode }: { runId: string; episode: number | null }) {
  const q = useQuery(RUN, { id: runId });
  const [pushed, setPushed] = useState<RunDetail | null>(null);
  useEffect(() => setPushed(null), [runId]);
  const fetched = q.data?.run ?? null;
  const run = pushed?.id === runId && (!fetched || pushed.seq >= fetched.seq) ? pushed : fetched;
  const live = run ? isLiveRun(run.status) : false;

  useSubscription(RUN_PROGRESS, { id: runId }, { onData: (d) => setPushed(d.runProgress), onComplete: q.refetch }, live);

  const eps = useRunEpisodes(runId, run?.episodesDone, live);
  const now = useNow(live ? 1000 : 0);
  const open = useCallback((i: number) => navigate(href.episode(runId, i)), [runId]);
  const close = useCallback(() => navigate(href.run(runId)), [runId]);
  // A metric no episode produced still has its chart when the run scores it (every play unanswered).
  const aggregates = run?.aggregateMetrics;
  const metricNames = useMemo(() => numericMetricNames(eps.episodes, aggregates), [eps.episodes, aggregates]);

  const title = run ? `${run.name ?? run.id} · ${titleCase(run.status)} · batch-eval` : 'batch-eval';
  useEffect(() => {
    document.title = title;
  }, [title]);

  if (!run) {
    if (q.error) return <ErrorBox error={q.error} title={`Run ${runId} could not be loaded`} onRetry={q.refetch} />;
    if (q.loading) return <Loading what={`Loading run ${runId}`} />;
    return (
      <Empty>
        There is no run <span className="mono">{runId}</span>. <a href={href.runs()}>All runs</a>
      </Empty>
    );
  }

  const elapsed = elapsedMs(run.startedAt, run.finishedAt, now);
  const remaining = run.episodeCount - run.episodesDone;
  const eta = run.status === 'RUNNING' && run.episodesDone > 0 && elapsed != null ? (elapsed / run.episodesDone) * remaining : null;

  return (
    <div className="page run-page" data-run-id={run.id} data-status={run.status}>
      <header className="page-head">
        <div>
          <div className="crumbs">
            <a href={href.runs()}>Runs</a> /
          </div>
          <h1>
            {run.name ? (
              <>
                {run.name} <span className="mono muted small">{run.id}</span>
              </>
            ) : (
              <span className="mono">{run.id}</span>
            )}{' '}
            <StatusBadge status={run.status} color={runColor(run.status, run.statusCounts)} />
            <RunEndings counts={run.statusCounts} />
          </h1>
          <p className="subtitle">
            <b>{run.graphName}</b> · {run.episodeCount} episodes · {run.workerCount} worker{run.workerCount === 1 ? '' : 's'} · seed{' '}
            {run.seed} · priority {run.priority}
            {run.timedOut && (
              <span className="warn-chip" title="At least one episode hit its wall-clock limit, which depends on machine speed">
                {' '}
                timed-out episodes
              </span>
            )}
            {run.summaryModified && (
              <span
                className="warn-chip"
                data-testid="summary-modified"
                title="summary.json no longer matches the digest recorded when the run finished; the state recorded then is shown, with the episode records on disk"
              >
                {' '}
                summary.json modified after the run finished: not trusted
              </span>
            )}
            {run.retiredWorkers.length > 0 && (
              <span
                className="warn-chip"
                data-testid="retired-workers"
                title={run.retiredWorkers.map((w) => `worker ${w.workerId}: ${w.reason}`).join('\n')}
              >
                {' '}
                {run.retiredWorkers.length} worker{run.retiredWorkers.length === 1 ? '' : 's'} retired (host would not start; results
                unchanged)
              </span>
            )}
          </p>
          <RunConcurrency concurrency={run.concurrency} />
          <StopWhenPanel stopWhen={run.stopWhen} />
        </div>
        <div className="actions">
          {live && <CancelButton runId={run.id} stopping={run.cancelRequested} onCancelled={q.refetch} />}
          {!live && (
            <RetryButton
              runId={run.id}
              statusCounts={run.statusCounts}
              episodesDone={run.episodesDone}
              episodeCount={run.episodeCount}
              onQueued={q.refetch}
            />
          )}
          <a className="button" href={href.runAgain(run.id)} data-testid="run-again">
            Run again
          </a>
        </div>
      </header>

      {run.codeTools.length > 0 && (
        <div className="banner banner-lock" role="note" data-testid="code-tools">
          <strong>Runs code-running tools</strong> ({run.codeTools.join(', ')}): the model's code and commands ran with the server's rights,
          as its operator allowed (<span className="mono">--allow-code-tools</span>).
        </div>
      )}

      {run.error && (
        <div className="state state-error" role="alert" data-testid="run-error">
          <strong>{run.error.code}</strong>
          <p>{run.error.message}</p>
        </div>
      )}

      <section className="panel progress-panel" data-testid="run-progress">
        <ProgressBar done={run.episodesDone} total={run.episodeCount} color={runColor(run.status, run.statusCounts)} />
        <div className="progress-facts">
          <span>
            <b data-testid="episodes-done">{run.episodesDone}</b> of {run.episodeCount} episodes
          </span>
          <span>created {fmtTime(run.createdAt)}</span>
          {run.startedAt && <span>started {fmtTime(run.startedAt)}</span>}
          {elapsed != null && (
            <span>
              {run.finishedAt ? 'took' : 'running for'} {fmtDuration(elapsed)}
            </span>
          )}
          {eta != null && <span>ETA {fmtDuration(eta)}</span>}
          {run.finishedAt && <span>finished {fmtTime(run.finishedAt)}</span>}
        </div>
        <div className="status-counts">
          {EPISODE_STATUSES.map((s) => {
            const n = run.statusCounts.find((c) => c.status === s)?.count ?? 0;
            return n ? (
              <span key={s} className="count-chip" style={{ '--chip': episodeStatusColor(s) } as React.CSSProperties}>
                {titleCase(s)} <b>{n}</b>
              </span>
            ) : null;
          })}
        </div>
      </section>

      <ShardBands runId={run.id} live={live} />

      <RunEndpoints runId={run.id} live={live} />

      <DeterminismAudit runId={run.id} runStatus={run.status} />

      <RunAbout runId={run.id} onEdited={q.refetch} />

      <RunModels models={run.models} />

      <section className="panel">
        <h2>Metrics</h2>
        <MetricCards metrics={run.aggregateMetrics} live={live} />
        {run.aggregateByTask.some((t) => t.metrics.length > 0) && (
          <>
            <h3>By task</h3>
            <TaskTable tasks={run.aggregateByTask} />
          </>
        )}
      </section>

      <RunReportSection runId={run.id} status={run.status} />

      <RunCharts run={run} episodes={eps.episodes} metricNames={metricNames} onPick={open} />

      <section className="panel">
        <h2>
          Episodes{' '}
          {eps.loading && eps.episodes.length > 0 && (
            <span className="muted small">
              <span className="spinner" aria-hidden /> loading the rest…
            </span>
          )}
        </h2>
        {eps.error && eps.episodes.length > 0 && <ErrorBox error={eps.error} title="Some episodes could not be loaded" />}
        {eps.error && eps.episodes.length === 0 ? (
          <ErrorBox error={eps.error} title="The episodes could not be loaded" />
        ) : eps.loading && eps.episodes.length === 0 ? (
          <Loading what="Loading episodes" />
        ) : (
          <EpisodeTable episodes={eps.episodes} metricNames={metricNames} selected={episode} onOpen={open} />
        )}
      </section>

      <Reproducibility runId={run.id} />

      {episode != null && (
        <EpisodeDrawer
          runId={run.id}
          index={episode}
          lastIndex={Math.max(run.episodeCount - 1, ...eps.episodes.map((e) => e.index))}
          onClose={close}
          onGo={open}
        />
      )}
    </div>
  );
}

function RunCharts({
  run,
  episodes,
  metricNames,
  onPick,
}: {
  run: RunDetail;
  episodes: EpisodeRow[];
  metricNames: string[];
  onPick(i: number): void;
}) {
  const [chosen, setChosen] = useState<string | null>(null);
  const metric = chosen && metricNames.includes(chosen) ? chosen : metricNames[0];
  const missing = run.aggregateMetrics.find((m) => m.name === metric)?.imputedValue ?? null;
  return (
    <section className="panel charts">
      <div className="panel-head">
        <h2>Charts</h2>
        {metricNames.length > 0 && (
          <div className="tabs" role="tablist">
            {metricNames.map((m) => (
              <button
                key={m}
                type="button"
                role="tab"
                aria-selected={m === metric}
                className={m === metric ? 'tab active' : 'tab'}
                onClick={() => setChosen(m)}
              >
                {m}
              </button>
            ))}
          </div>
        )}
      </div>
      {!metric ? (
        <Empty>
          {episodes.length
            ? 'No numeric metric was recorded.'
            : run.status === 'QUEUED'
              ? 'The run has not started yet.'
              : 'Charts appear when the first episode ends.'}
        </Empty>
      ) : (
        <div className="chart-grid">
          <figure>
            <figcaption>{metric} per episode, with its running mean in index order</figcaption>
            <MetricSeriesChart episodes={episodes} metric={metric} missing={missing} />
          </figure>
          <figure>
            <figcaption>distribution of {metric}</figcaption>
            <HistogramChart episodes={episodes} metric={metric} missing={missing} />
          </figure>
        </div>
      )}
      {episodes.length > 0 && (
        <figure className="wide">
          <figcaption>worker timeline — one lane per worker, one bar per episode, coloured by its ending</figcaption>
          <WorkerTimeline episodes={episodes} workerCount={run.workerCount} onPick={onPick} />
        </figure>
      )}
    </section>
  );
}
