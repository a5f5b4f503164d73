/**
 * A forest plot of differences (candidate − baseline), drawn as SVG: one row per comparison, the
 * paired 95 % interval as a thick bar with the mean difference on it, the unpaired interval as a
 * thin line behind it for contrast, and the zero line. A bar that misses zero is a difference.
 */
import { fmtNumber } from '../lib/format.js';

export interface ForestRow {
  key: string;
  label: string;
  diff: number | null;
  low: number | null;
  high: number | null;
  unpairedLow?: number | null;
  unpairedHigh?: number | null;
  /** Flagged after the multiple-comparison correction. */
  significant?: boolean;
}

const ROW_H = 26;
const LABEL_W = 170;
const PLOT_W = 360;
const PAD = 12;
const AXIS_H = 24;

/** About five round ticks covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

export function ForestPlot({ rows, title }: { rows: ForestRow[]; title: string }) {
  const values = rows
    .flatMap((r) => [r.low, r.high, r.unpairedLow, r.unpairedHigh, r.diff])
    .filter((v): v is number => v != null && Number.isFinite(v));
  let lo = Math.min(0, ...values);
  let hi = Math.max(0, ...values);
  if (hi - lo < 1e-12) {
    lo -= 1;
    hi += 1;
  }
  const span = hi - lo;
  lo -= span * 0.05;
  hi += span * 0.05;
  const x = (v: number) => LABEL_W + PAD + ((v - lo) / (hi - lo)) * PLOT_W;
  const height = rows.length * ROW_H + AXIS_H + PAD;
  const width = LABEL_W + PLOT_W + 2 * PAD;
  const ticks = niceTicks(lo, hi);
  const described = rows.map((r) => `${r.label}: ${fmtNumber(r.diff)} (95% CI ${fmtNumber(r.low)} to ${fmtNumber(r.high)})`).join('; ');
  return (
    <svg
      className="forest-plot"
      data-testid="forest-plot"
      data-rows={rows.length}
      viewBox={`0 0 ${width} ${height}`}
      width="100%"
      style={{ maxWidth: width }}
      role="img"
      aria-label={`${title}. ${described}`}
    >
      <title>{title}</title>
      {ticks.map((t) => (
        <g key={t}>
          <line x1={x(t)} x2={x(t)} y1={PAD / 2} y2={rows.length * ROW_H + PAD / 2} className="forest-grid" />
          <text x={x(t)} y={rows.length * ROW_H + PAD / 2 + 14} className="forest-tick" textAnchor="middle">
            {fmtNumber(t, 2)}
          </text>
        </g>
      ))}
      <line x1={x(0)} x2={x(0)} y1={PAD / 2 - 4} y2={rows.length * ROW_H + PAD / 2} className="forest-zero" />
      {rows.map((r, i) => {
        const y = PAD / 2 + i * ROW_H + ROW_H / 2;
        return (
          <g key={r.key} className={r.significant ? 'forest-row significant' : 'forest-row'} data-row={r.key}>
            <text x={LABEL_W} y={y + 4} textAnchor="end" className="forest-label">
              {r.label.length > 26 ? `${r.label.slice(0, 25)}…` : r.label}
            </text>
            {r.unpairedLow != null && r.unpairedHigh != null && (
              <line x1={x(r.unpairedLow)} x2={x(r.unpairedHigh)} y1={y + 7} y2={y + 7} className="forest-unpaired" />
            )}
            {r.low != null && r.high != null && (
              <line x1={x(r.low)} x2={x(r.high)} y1={y} y2={y} className="forest-ci" data-testid="forest-ci" />
            )}
            {r.diff != null && <circle cx={x(r.diff)} cy={y} r={4.5} className="forest-point" />}
          </g>
        );
      })}
    </svg>
  );
}
