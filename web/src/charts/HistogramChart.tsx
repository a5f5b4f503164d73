import { useMemo } from 'react';
import uPlot from 'uplot';
import { fmtNumber } from '../lib/format.js';
import { histogram, metricSeries } from '../lib/metrics.js';
import type { MetricChartProps } from './MetricSeriesChart.js';
import { UPlotChart } from './UPlotChart.js';

const bars = uPlot.paths.bars!({ size: [0.9, 120] });

/** The distribution of one metric over the run's episodes. */
export function HistogramChart({ episodes, metric, missing = null, height = 240 }: MetricChartProps) {
  const hist = useMemo(() => histogram(metricSeries(episodes, metric, missing).y), [episodes, metric, missing]);
  const data = useMemo(() => [hist.centers, hist.counts] as uPlot.AlignedData, [hist]);
  const lo = hist.centers.length ? hist.centers[0]! - hist.binWidth / 2 : 0;
  const hi = hist.centers.length ? hist.centers[hist.centers.length - 1]! + hist.binWidth / 2 : 1;

  const options = useMemo<Omit<uPlot.Options, 'width'>>(
    () => ({
      height,
      legend: { show: false },
      cursor: { show: true, points: { show: false }, drag: { x: false, y: false } },
      scales: { x: { time: false, range: () => [lo, hi] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [
        {
          label: metric,
          size: 40,
          labelSize: 18,
          stroke: '#5b6577',
          grid: { show: false },
          ...(hist.discrete ? { splits: () => hist.centers, values: (_u: uPlot, vals: number[]) => vals.map((v) => fmtNumber(v)) } : {}),
        },
        { label: 'episodes', size: 50, labelSize: 18, stroke: '#5b6577', grid: { stroke: '#eceff4' } },
      ],
      series: [{}, { label: 'episodes', fill: 'rgba(47,125,225,0.55)', stroke: '#2f7de1', paths: bars, points: { show: false } }],
    }),
    [metric, height, lo, hi, hist],
  );

  return (
    <div data-testid="histogram-chart" data-bins={hist.centers.length}>
      <UPlotChart options={options} data={data} />
    </div>
  );
}
