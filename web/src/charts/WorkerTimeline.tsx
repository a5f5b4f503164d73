/**
 * How the workers shared the run: one lane per worker, one bar per episode from its start
 * to its end, coloured by how it ended. Drawn on uPlot's axes in its `draw` hook.
 */
import { useMemo, useRef, useState } from 'react';
import type uPlot from 'uplot';
import type { EpisodeRow } from '../api/fragments.js';
import { fmtDuration, parseTime, titleCase } from '../lib/format.js';
import { EPISODE_STATUSES, episodeStatusColor } from '../lib/statuses.js';
import { UPlotChart } from './UPlotChart.js';

interface Bar {
  index: number;
  worker: number;
  start: number;
  end: number;
  status: string;
}

export interface WorkerTimelineProps {
  episodes: EpisodeRow[];
  workerCount: number;
  onPick?: (index: number) => void;
}

export function WorkerTimeline({ episodes, workerCount, onPick }: WorkerTimelineProps) {
  const { bars, t0, span } = useMemo(() => {
    const raw = episodes
      .map((e) => ({ e, s: parseTime(e.startedAt), f: parseTime(e.finishedAt) }))
      .filter((r): r is { e: EpisodeRow; s: number; f: number } => r.s != null && r.f != null);
    const t0 = raw.length ? Math.min(...raw.map((r) => r.s)) : 0;
    const bars: Bar[] = raw.map(({ e, s, f }) => ({
      index: e.index,
      worker: e.workerId,
      start: (s - t0) / 1000,
      end: (f - t0) / 1000,
      status: e.status,
    }));
    const span = bars.length ? Math.max(...bars.map((b) => b.end)) : 1;
    return { bars, t0, span: Math.max(span, 0.001) };
  }, [episodes]);

  const lanes = Math.max(workerCount, ...bars.map((b) => b.worker + 1), 1);
  const barsRef = useRef(bars);
  barsRef.current = bars;
  const pickRef = useRef(onPick);
  pickRef.current = onPick;
  const [hover, setHover] = useState<Bar | null>(null);

  const height = Math.min(60 + lanes * 28, 360);
  const data = useMemo(
    () =>
      [
        [0, span],
        [null, null],
      ] as uPlot.AlignedData,
    [bars, span],
  );

  const options = useMemo<Omit<uPlot.Options, 'width'>>(() => {
    const barAt = (u: uPlot): Bar | null => {
      const { left, top } = u.cursor;
      if (left == null || top == null || left < 0) return null;
      const t = u.posToVal(left, 'x');
      const lane = Math.round(u.posToVal(top, 'y'));
      return barsRef.current.find((b) => b.worker === lane && b.start <= t && t <= b.end) ?? null;
    };
    return {
      height,
      legend: { show: false },
      cursor: { points: { show: false }, drag: { x: true, y: false }, y: false },
      scales: { x: { time: false }, y: { range: [-0.6, lanes - 0.4] } },
      axes: [
        { label: 'seconds since the first episode started', size: 40, labelSize: 18, stroke: '#5b6577', grid: { stroke: '#eceff4' } },
        {
          size: 44,
          stroke: '#5b6577',
          grid: { show: false },
          splits: () => Array.from({ length: lanes }, (_, i) => i),
          values: (_u, vals) => vals.map((v) => `w${v}`),
        },
      ],
      series: [{}, { label: 'lane', stroke: 'transparent', points: { show: false } }],
      hooks: {
        draw: [
          (u: uPlot) => {
            const ctx = u.ctx;
            const laneH = Math.abs(u.valToPos(0, 'y', true) - u.valToPos(1, 'y', true));
            const h = Math.max(2, laneH * 0.64);
            const gap = Math.max(0.5, devicePixelRatio * 0.5);
            ctx.save();
            ctx.beginPath();
            ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
            ctx.clip();
            for (const b of barsRef.current) {
              const x0 = u.valToPos(b.start, 'x', true);
              const x1 = u.valToPos(b.end, 'x', true);
              const y = u.valToPos(b.worker, 'y', true);
              ctx.fillStyle = episodeStatusColor(b.status);
              ctx.fillRect(x0 + gap, y - h / 2, Math.max(1, x1 - x0 - 2 * gap), h);
            }
            ctx.restore();
          },
        ],
        setCursor: [(u: uPlot) => setHover(barAt(u))],
        ready: [
          (u: uPlot) => {
            u.over.addEventListener('click', () => {
              const b = barAt(u);
              if (b) pickRef.current?.(b.index);
            });
          },
        ],
      },
    };
  }, [lanes, height]);

  const present = EPISODE_STATUSES.filter((s) => bars.some((b) => b.status === s));
  return (
    <div className="timeline" data-testid="worker-timeline" data-bars={bars.length}>
      <UPlotChart options={options} data={data} />
      <div className="timeline-foot">
        <span className="legend">
          {present.map((s) => (
            <span key={s} className="legend-item">
              <i style={{ background: episodeStatusColor(s) }} /> {titleCase(s)}
            </span>
          ))}
        </span>
        <span className="timeline-hover">
          {hover
            ? `episode ${hover.index} · w${hover.worker} · ${titleCase(hover.status)} · ${fmtDuration((hover.end - hover.start) * 1000)} (click to open)`
            : bars.length
              ? `${bars.length} episodes over ${lanes} worker${lanes === 1 ? '' : 's'}, ${fmtDuration(span * 1000)} of wall time since ${new Date(t0).toLocaleTimeString()}`
              : 'No finished episodes yet.'}
        </span>
      </div>
    </div>
  );
}
