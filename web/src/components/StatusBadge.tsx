import { statusColor } from '../lib/statuses.js';
import { titleCase } from '../lib/format.js';

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className="badge" data-status={status} style={{ '--badge': statusColor(status) } as React.CSSProperties}>
      {titleCase(status)}
    </span>
  );
}
