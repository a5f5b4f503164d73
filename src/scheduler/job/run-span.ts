/** A job's run span, started as it launches when this process traces (ended by finalizeJob). */
import { runSpanInfo } from '../../eval-process/run-span-info.js';
import { activeTracing } from '../../tracing/tracing.js';
import type { Job } from './job.js';

export function startRunSpan(job: Job): void {
  const tracing = activeTracing();
  if (!tracing || job.trace) return;
  job.trace = tracing.startRun(runSpanInfo(job.spec));
}
