import { useMemo } from 'react';
import type uPlot from 'uplot';
import { metricSeries } from '../lib/metrics.js';
import type { EpisodeRow } from '../api/fragments.js';
import { UPlotChart } from './UPlotChart.js';

function rangeWithZero(min: number | null, max: number | null): [number, number] {
  if (min == null || max == null) return [0, 1];
  const lo = Math.min(0, min);
  const hi = Math.max(0, max);
  if (hi === lo) return [0, 1];
  const pad = (hi - lo) * 0.06;
  return [lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : 0];
}

/** One metric per episode index (points) with its running mean over the index order (line). */
/** What a chart of one metric over a run's episodes takes. */
export interface MetricChartProps {
  episodes: EpisodeRow[];
  metric: string;
  /** What an episode that never produced the metric scores (MetricAggregate.imputedValue); null: left out. */
  missing?: number | null;
  height?: number;
}

export function MetricSeriesChart({ episodes, metric, missing = null, height = 240 }: MetricChartProps) {
  const data = useMemo(() => {
    const s = metricSeries(episodes, metric, missing);
    return [s.x, s.y, s.mean] as uPlot.AlignedData;
  }, [episodes, metric, missing]);

  const options = useMemo<Omit<uPlot.Options, 'width'>>(
    () => ({
      height,
      legend: { show: true, live: true },
      cursor: { drag: { x: true, y: false } },
      scales: {
        x: { time: false },
        // Keep 0 in view so a 0/1 metric such as success reads as a rate, not a flat line.
        y: { range: (_u, min, max) => rangeWithZero(min, max) },
      },
      axes: [
        { label: 'episode index', size: 40, labelSize: 18, stroke: '#5b6577', grid: { stroke: '#eceff4' } },
        { label: metric, size: 50, labelSize: 18, stroke: '#5b6577', grid: { stroke: '#eceff4' } },
      ],
      series: [
        { label: 'episode' },
        {
          label: metric,
          stroke: '#8fb3ea',
          paths: () => null,
          points: { show: true, size: 5, stroke: '#5d93e0', fill: '#a9c6f0' },
        },
        { label: 'running mean', stroke: '#d6651f', width: 2, points: { show: false } },
      ],
    }),
    [metric, height],
  );

  return (
    <div data-testid="metric-chart" data-points={data[0].length}>
      <UPlotChart options={options} data={data} />
    </div>
  );
}
