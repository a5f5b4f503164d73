/** The scale-out fleet: one row per worker heard from lately, with its free resources and the shards it plays. */
import { WORKERS } from '../api/queries.js';
import { Empty, ErrorBox, Loading } from '../components/States.js';
import { href } from '../hooks/useHashRoute.js';
import { useNow } from '../hooks/useNow.js';
import { useQuery } from '../hooks/useQuery.js';
import { fmtMb, parseTime } from '../lib/format.js';

/** "3 s ago", "2 m ago": heartbeats come every 2 s, so seconds matter. */
export function fmtAgo(iso: string, now: number): string {
  const t = parseTime(iso);
  if (t == null) return '–';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} m ago` : `${Math.floor(m / 60)} h ago`;
}

export function WorkersPage() {
  // Workers report by heartbeat into Redis; nothing pushes them, so poll.
  const q = useQuery(WORKERS, {}, { pollMs: 2000 });
  const now = useNow(1000);

  if (!q.data) {
    if (q.error) return <ErrorBox error={q.error} title="The workers could not be loaded" onRetry={q.refetch} />;
    return <Loading what="Loading the workers" />;
  }
  const workers = q.data.workers;
  const busy = workers.reduce((n, w) => n + w.shards.length, 0);
  const slots = workers.reduce((n, w) => n + w.slots, 0);

  return (
    <div className="page">
      <header className="page-head">
        <h1>Workers</h1>
        {workers.length > 0 && (
          <span className="muted">
            {workers.length} worker{workers.length === 1 ? '' : 's'} · {busy}/{slots} slots busy
          </span>
        )}
      </header>
      <section className="panel">
        {workers.length === 0 ? (
          <Empty>
            <div className="workers-empty" data-testid="workers-empty">
              <p>No scale-out worker has reported in the last 30 seconds (a server without Redis plays runs on its own machine).</p>
              <p>To spread runs over several machines, start the server with Redis and a worker on each machine:</p>
              <pre className="mono">
                {'evalctl serve --redis redis://REDIS_HOST:6379\nevalctl worker --redis redis://REDIS_HOST:6379 --server http://HEAD:4000'}
              </pre>
              <p>
                See <span className="mono">docs/scale-out.md</span>.
              </p>
            </div>
          </Empty>
        ) : (
          <div className="table-wrap">
            <table className="grid" data-testid="workers-table">
              <thead>
                <tr>
                  <th>name</th>
                  <th>machine</th>
                  <th className="num">slots busy</th>
                  <th className="num">free RAM</th>
                  <th className="num">free VRAM</th>
                  <th className="num">cores</th>
                  <th>shards running</th>
                  <th className="num">last heartbeat</th>
                </tr>
              </thead>
              <tbody>
                {workers.map((w) => (
                  <tr key={w.name} data-worker={w.name}>
                    <td className="mono">{w.name}</td>
                    <td className="mono">{w.machine}</td>
                    <td className="num">
                      {w.shards.length}/{w.slots}
                    </td>
                    <td className="num">{fmtMb(w.ramFreeMb)}</td>
                    <td className="num">{w.vramFreeMb == null ? 'no GPU' : fmtMb(w.vramFreeMb)}</td>
                    <td className="num">{w.cores}</td>
                    <td>
                      {w.shards.length === 0 ? (
                        <span className="muted">idle</span>
                      ) : (
                        w.shards.map((s, i) => (
                          <span key={`${s.runId}:${s.shard}`}>
                            {i > 0 && ', '}
                            <a className="mono" href={href.run(s.runId)}>
                              {s.runId} #{s.shard}
                            </a>
                          </span>
                        ))
                      )}
                    </td>
                    <td className="num" title={w.lastHeartbeat}>
                      {fmtAgo(w.lastHeartbeat, now)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}
