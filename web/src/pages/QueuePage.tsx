/** What waits and what runs: queued jobs in admission order with their reasons, active jobs, resources. */
import { useEffect, useState } from 'react';
import { QUEUE, QUEUE_CHANGED } from '../api/queries.js';
import type { ActiveJob, QueueEntry } from '../api/fragments.js';
import { CancelButton } from '../components/CancelButton.js';
import { ProgressBar } from '../components/ProgressBar.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href } from '../hooks/useHashRoute.js';
import { useNow } from '../hooks/useNow.js';
import { useQuery } from '../hooks/useQuery.js';
import { useSubscription } from '../hooks/useSubscription.js';
import { elapsedMs, fmtDuration, fmtMb, fmtTime } from '../lib/format.js';

export function QueuePage() {
  // Resources (free memory, the interactive lock) are sampled, not pushed: poll them.
  const q = useQuery(QUEUE, {}, { pollMs: 2000 });
  const [pushed, setPushed] = useState<{ at: number; queue: QueueEntry[]; activeJobs: ActiveJob[] } | null>(null);
  const [fetchedAt, setFetchedAt] = useState(0);
  useEffect(() => {
    if (q.data) setFetchedAt(Date.now());
  }, [q.data]);
  useSubscription(
    QUEUE_CHANGED,
    {},
    {
      onData: (d) => setPushed({ at: Date.now(), ...d.queueChanged }),
    },
  );
  const now = useNow(1000);

  if (!q.data) {
    if (q.error) return <ErrorBox error={q.error} title="The queue could not be loaded" onRetry={q.refetch} />;
    return <Loading what="Loading the queue" />;
  }
  const usePushed = pushed && pushed.at > fetchedAt;
  const queue = usePushed ? pushed.queue : q.data.queue;
  const active = usePushed ? pushed.activeJobs : q.data.activeJobs;
  const res = q.data.resources;

  return (
    <div className="page">
      <header className="page-head">
        <h1>Queue</h1>
        <a className="button primary" href={href.newRun()}>
          New run
        </a>
      </header>

      {res.interactiveLockHolder ? (
        <div className="banner banner-lock" role="status" data-testid="interactive-lock">
          <strong>Interactive lock held</strong> by <span className="mono">{res.interactiveLockHolder}</span>: a live Play session has the
          machine, so no queued run is admitted until it ends.
        </div>
      ) : null}

      <section className="panel">
        <h2>
          Running <span className="muted">({active.length})</span>
        </h2>
        {active.length === 0 ? (
          <Empty>Nothing is running.</Empty>
        ) : (
          <div className="table-wrap">
            <table className="grid" data-testid="active-table">
              <thead>
                <tr>
                  <th>run</th>
                  <th>graph</th>
                  <th className="num">priority</th>
                  <th className="progress-col">progress</th>
                  <th className="num">workers</th>
                  <th className="num">pid</th>
                  <th className="num">memory</th>
                  <th>started</th>
                  <th className="num">running for</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {active.map((j) => (
                  <tr key={j.runId} data-run-id={j.runId}>
                    <td className="mono">
                      <a href={href.run(j.runId)}>{j.runId}</a>
                    </td>
                    <td>
                      {j.graphName}
                      {j.exclusiveGpu && <span className="tag">exclusive GPU</span>}
                      {!j.viaSubprocess && <span className="tag">in-process</span>}
                    </td>
                    <td className="num">{j.priority}</td>
                    <td className="progress-col">
                      <ProgressBar done={j.episodesDone} total={j.episodeCount} />
                    </td>
                    <td className="num">{j.workerCount}</td>
                    <td className="num mono">{j.pid ?? '–'}</td>
                    <td className="num">{fmtMb(j.rssMb)}</td>
                    <td>{fmtTime(j.startedAt)}</td>
                    <td className="num">{fmtDuration(elapsedMs(j.startedAt, null, now))}</td>
                    <td>
                      <CancelButton runId={j.runId} small stopping={j.cancelRequested} onCancelled={q.refetch} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="panel">
        <h2>
          Waiting <span className="muted">({queue.length}, in admission order)</span>
        </h2>
        {queue.length === 0 ? (
          <Empty>The queue is empty.</Empty>
        ) : (
          <div className="table-wrap">
            <table className="grid" data-testid="queue-table">
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>run</th>
                  <th>graph</th>
                  <th className="num">priority</th>
                  <th className="num">episodes</th>
                  <th className="num">workers</th>
                  <th>needs</th>
                  <th>waiting because</th>
                  <th>queued</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {queue.map((e) => (
                  <tr key={e.runId} data-run-id={e.runId}>
                    <td className="num">{e.position}</td>
                    <td className="mono">
                      <a href={href.run(e.runId)}>{e.runId}</a>
                    </td>
                    <td>
                      {e.graphName}
                      {e.exclusiveGpu && <span className="tag">exclusive GPU</span>}
                    </td>
                    <td className="num">{e.priority}</td>
                    <td className="num">{e.episodeCount}</td>
                    <td className="num">{e.workerCount}</td>
                    <td className="small">
                      {e.estimate ? (
                        <>
                          {fmtMb(e.estimate.ramMb)} RAM{e.estimate.vramMb ? ` · ${fmtMb(e.estimate.vramMb)} VRAM` : ''}{' '}
                          <span className="muted">({e.estimate.source})</span>
                        </>
                      ) : (
                        '–'
                      )}
                    </td>
                    <td className="reason">
                      {e.waitingReason}
                      {e.reserving && <span className="tag">reserving</span>}
                    </td>
                    <td>{fmtTime(e.createdAt)}</td>
                    <td>
                      <CancelButton runId={e.runId} small onCancelled={q.refetch} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="panel">
        <h2>Resources</h2>
        <dl className="kv resources">
          <dt>RAM</dt>
          <dd>
            {fmtMb(res.ramFreeMb)} free of {fmtMb(res.ramTotalMb)} · {fmtMb(res.reservedRamMb)} reserved by running jobs
          </dd>
          <dt>GPU memory</dt>
          <dd>
            {res.vramTotalMb != null ? (
              <>
                {fmtMb(res.vramFreeMb)} free of {fmtMb(res.vramTotalMb)} · {fmtMb(res.reservedVramMb)} reserved
              </>
            ) : (
              <>not measured (no GPU found) · {fmtMb(res.reservedVramMb)} reserved on the static ledger</>
            )}
          </dd>
          <dt>interactive lock</dt>
          <dd>{res.interactiveLockHolder ? <span className="mono">{res.interactiveLockHolder}</span> : 'free'}</dd>
          <dt>sampled</dt>
          <dd>{fmtTime(res.sampledAt)}</dd>
        </dl>
      </section>
    </div>
  );
}
