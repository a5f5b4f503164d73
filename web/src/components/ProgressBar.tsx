export interface ProgressBarProps {
  done: number;
  total: number;
  /** Colour of the filled part. */
  color?: string;
  label?: boolean;
}

export function ProgressBar({ done, total, color, label = true }: ProgressBarProps) {
  const pct = total > 0 ? Math.min(100, (done / total) * 100) : 0;
  return (
    <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={total} aria-valuenow={done}>
      <div className="progress-fill" style={{ width: `${pct}%`, background: color }} />
      {label && (
        <span className="progress-label">
          {done} / {total}
        </span>
      )}
    </div>
  );
}
