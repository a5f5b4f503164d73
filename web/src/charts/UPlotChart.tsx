/** A uPlot chart that follows its container's width and takes new data without being rebuilt. */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface UPlotChartProps {
  /** Memoise: a new object rebuilds the chart. `width` is taken from the container. */
  options: Omit<uPlot.Options, 'width'>;
  data: uPlot.AlignedData;
  testId?: string;
}

export function UPlotChart({ options, data, testId }: UPlotChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const dataRef = useRef(data);
  dataRef.current = data;

  useEffect(() => {
    const host = el.current;
    if (!host) return;
    const u = new uPlot({ ...options, width: Math.max(200, host.clientWidth) } as uPlot.Options, dataRef.current, host);
    plot.current = u;
    const ro = new ResizeObserver(() => {
      const w = Math.max(200, host.clientWidth);
      if (Math.abs(w - u.width) > 1) u.setSize({ width: w, height: options.height });
    });
    ro.observe(host);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [options]);

  useEffect(() => {
    const u = plot.current;
    if (u && u.data !== data) u.setData(data);
  }, [data]);

  return <div className="chart" ref={el} data-testid={testId} />;
}
