import { statusColor } from '../lib/statuses.js';
import { titleCase } from '../lib/format.js';

/** `color` overrides the status's own, e.g. a COMPLETED run whose episodes failed. */
export function StatusBadge({ status, color }: { status: string; color?: string }) {
  return (
    <span className="badge" data-status={status} style={{ '--badge': color ?? statusColor(status) } as React.CSSProperties}>
      {titleCase(status)}
    </span>
  );
}
