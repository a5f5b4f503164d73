/** The run page's concurrency: episodes in flight over the workers, how the count was chosen, and each limit that binds. */
import type { RunConcurrency as Concurrency } from '../api/fragments.js';

export function RunConcurrency({ concurrency: c }: { concurrency: Concurrency | null }) {
  if (!c) return null;
  return (
    <p className="small" data-testid="run-concurrency">
      <b>{c.maxInFlight}</b> episode{c.maxInFlight === 1 ? '' : 's'} in flight on {c.workers} worker{c.workers === 1 ? '' : 's'}
      {c.perWorker > 1 ? ` (up to ${c.perWorker} each)` : ''} <span className="muted">· {c.basis}</span>
      {c.limits.map((l) => (
        <span key={l.name} className="warn-chip" title={l.reason} data-testid="concurrency-limit">
          {' '}
          bound by {l.name} = {l.limit}
        </span>
      ))}
    </p>
  );
}
