import type { MetricAggregate } from '../api/fragments.js';
import { fmtNumber } from '../lib/format.js';
import { headlineMetrics, shownStderr } from '../lib/metrics.js';
import { Empty } from './States.js';

/** One card per metric: mean ± standard error, the count it is over, and the range. */
export function MetricCards({ metrics, live }: { metrics: MetricAggregate[]; live: boolean }) {
  if (metrics.length === 0) {
    return <Empty>{live ? 'No metrics yet: they appear as episodes finish.' : 'No episode of this run reported a metric.'}</Empty>;
  }
  const ordered = headlineMetrics(metrics, metrics.length);
  return (
    <div className="cards" data-testid="metric-cards">
      {ordered.map((m) => (
        <div key={m.name} className="card" data-metric={m.name}>
          <div className="card-label">{m.name}</div>
          <div className="card-value">
            {fmtNumber(m.mean)}
            {shownStderr(m) != null && <span className="stderr"> ± {fmtNumber(shownStderr(m), 2)}</span>}
          </div>
          <div className="card-foot">
            n = {m.count} · {fmtNumber(m.min)} … {fmtNumber(m.max)}
          </div>
        </div>
      ))}
    </div>
  );
}
