export interface ProgressBarProps {
  done: number;
  total: number;
  /** Colour of the filled part. */
  color?: string;
  label?: boolean;
  /** What the bar measures, for screen readers. @default 'episodes done' */
  name?: string;
}

export function ProgressBar({ done, total, color, label = true, name = 'episodes done' }: ProgressBarProps) {
  const pct = total > 0 ? Math.min(100, (done / total) * 100) : 0;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={name}
      aria-valuemin={0}
      aria-valuemax={total}
      aria-valuenow={done}
      aria-valuetext={`${done} of ${total}`}
    >
      <div className="progress-fill" style={{ width: `${pct}%`, background: color }} />
      {label && (
        <span className="progress-label">
          {done} / {total}
        </span>
      )}
    </div>
  );
}
