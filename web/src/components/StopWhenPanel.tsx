/**
 * The run page's early stop: the anytime-valid interval narrowing as the prefix of the run's
 * seeded order grows (against the bound it must clear), the verdict, and once stopped where and
 * what it saved.
 */
import type { RunStopWhen } from '../api/fragments.js';

const W = 320;
const H = 90;
const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3));

/** The bound a requirement's interval must clear ("spl > 0" → 0, "|x| <= 0.02" → ±0.02); null for a half-width rule. */
function boundsOf(requirement: string | null): number[] {
  const m = requirement ? /(<=|>=|<|>)\s*([-+]?[\d.]+(?:e[-+]?\d+)?)\s*$/i.exec(requirement) : null;
  if (!m) return [];
  const v = Number(m[2]);
  return requirement?.trim().startsWith('|') ? [-v, v] : [v];
}

function PathChart({ w }: { w: RunStopWhen }) {
  const pts = w.path;
  if (pts.length === 0) return null;
  const bounds = boundsOf(w.requirement);
  const last = pts[pts.length - 1]!;
  const maxN = Math.max(last.read, w.stopped?.planned ?? last.read);
  // The first points are the widest; the chart frames the interval from the tenth point on, and the bounds.
  const framed = pts.slice(Math.min(pts.length - 1, 9));
  const lo = Math.min(...framed.map((p) => p.low), ...bounds);
  const hi = Math.max(...framed.map((p) => p.high), ...bounds);
  const span = hi - lo || 1;
  const x = (n: number) => (n / maxN) * W;
  const y = (v: number) => H - ((Math.min(hi, Math.max(lo, v)) - lo) / span) * H;
  const upper = pts.map((p) => `${x(p.read).toFixed(1)},${y(p.high).toFixed(1)}`);
  const lower = pts.map((p) => `${x(p.read).toFixed(1)},${y(p.low).toFixed(1)}`).reverse();
  return (
    <svg
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`interval of ${w.metric} over ${last.read} episodes: from [${fmt(pts[0]!.low)}, ${fmt(pts[0]!.high)}] to [${fmt(last.low)}, ${fmt(last.high)}]`}
      data-testid="stop-when-path"
      data-points={pts.length}
    >
      <polygon points={[...upper, ...lower].join(' ')} fill="var(--accent, #4a7bd0)" fillOpacity={0.3} />
      {bounds.map((b) => (
        <line key={b} x1={0} x2={W} y1={y(b)} y2={y(b)} stroke="currentColor" strokeDasharray="4 3" />
      ))}
    </svg>
  );
}

export function StopWhenPanel({ stopWhen: w }: { stopWhen: RunStopWhen | null }) {
  if (!w) return null;
  const what = w.requirement ?? `${w.rule} on ${w.metric}`;
  return (
    <section className="small" data-testid="stop-when" aria-label="Early stop">
      <p>
        Stops early: <b>{what}</b>
        {w.against ? (
          <>
            {' '}
            against <a href={`#/runs/${w.against}`}>{w.against}</a>
          </>
        ) : null}{' '}
        · after <b data-testid="stop-when-read">{w.read}</b> episodes the interval is{' '}
        <span className="mono" data-testid="stop-when-interval">
          {w.low === null || w.high === null ? '–' : `[${fmt(w.low)}, ${fmt(w.high)}]`}
        </span>
        {w.verdict ? (
          <>
            {' '}
            · verdict{' '}
            <b data-testid="stop-when-verdict" data-verdict={w.verdict}>
              {w.verdict.toLowerCase()}
            </b>
          </>
        ) : null}
      </p>
      <PathChart w={w} />
      {w.stopped ? (
        <p data-testid="stop-when-stopped">
          Stopped at episode {w.stopped.atEpisode} of {w.stopped.planned} ({w.stopped.reason.toLowerCase()}): {w.stopped.saved} not played
          {w.stopped.fixedNPlan !== null ? `; a fixed-n plan would need about ${w.stopped.fixedNPlan}` : ''}.
        </p>
      ) : null}
    </section>
  );
}
