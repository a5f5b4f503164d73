/** How a run's episodes ended beyond "completed": "· 10 errors" in a warning style, "· 3 out of budget" muted. */
import { endingParts } from '../lib/endings.js';
import type { EpisodeStatus } from '../lib/statuses.js';

export function RunEndings({ counts }: { counts: ReadonlyArray<{ status: EpisodeStatus; count: number }> }) {
  const parts = endingParts(counts);
  if (parts.length === 0) return null;
  const total = counts.reduce((n, c) => n + c.count, 0);
  return (
    <span className="run-endings" data-testid="run-endings">
      {parts.map((p) => (
        <span
          key={p.status}
          className={p.problem ? 'ending problem' : 'ending'}
          data-ending={p.status}
          title={`${p.count} of ${total} finished episodes ended ${p.status}`}
        >
          {' · '}
          {p.text}
        </span>
      ))}
    </span>
  );
}
