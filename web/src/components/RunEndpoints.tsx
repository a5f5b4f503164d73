/** The model endpoints a live run is calling: the limit of calls in flight now, and how often the endpoint said "slow down". */
import { RUN_ENDPOINTS, type EndpointRow } from '../api/queries.js';
import { useQuery } from '../hooks/useQuery.js';

/** Polls while the run is live; draws nothing once it ends or when it calls no endpoint. */
export function RunEndpoints({ runId, live }: { runId: string; live: boolean }) {
  const q = useQuery(RUN_ENDPOINTS, { id: runId }, { pollMs: 2000, skip: !live });
  const endpoints = live ? q.data?.run?.endpoints : undefined;
  if (!endpoints || endpoints.length === 0) return null;
  return (
    <section className="panel" data-testid="run-endpoints" aria-labelledby="run-endpoints-title">
      <h2 id="run-endpoints-title">
        Model endpoints <span className="muted">(shared by every run on this server)</span>
      </h2>
      <div className="table-wrap">
        <table className="grid compact">
          <thead>
            <tr>
              <th>Endpoint</th>
              <th>Limit</th>
              <th>In flight</th>
              <th>Waiting</th>
              <th>429s</th>
              <th>Retry-After</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((e) => (
              <EndpointRowView key={`${e.baseUrl} ${e.model}`} e={e} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function EndpointRowView({ e }: { e: EndpointRow }) {
  return (
    <tr data-endpoint={e.model}>
      <td>
        <span className="mono">{e.baseUrl}</span> · {e.model}
      </td>
      <td title={e.mode === 'ADAPTIVE' ? `adaptive, between ${e.floor} and ${e.cap}` : 'fixed (max_concurrency)'}>
        <b data-testid="endpoint-level">{e.level}</b> <span className="muted">{e.mode === 'ADAPTIVE' ? 'adaptive' : 'fixed'}</span>
      </td>
      <td className="mono">{e.inFlight}</td>
      <td className="mono">{e.waiting}</td>
      <td className="mono" data-testid="endpoint-429">
        {e.count429}
        {e.count503 > 0 && <span className="muted"> (+{e.count503} × 503)</span>}
      </td>
      <td className="mono">
        {e.lastRetryAfterMs == null ? '—' : `${e.lastRetryAfterMs} ms`}
        {e.pausedForMs > 0 && <span className="muted"> · held {e.pausedForMs} ms</span>}
      </td>
    </tr>
  );
}
