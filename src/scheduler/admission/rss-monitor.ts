/**
 * The RSS sampling loop: every interval, the RSS of each running eval process tree (for
 * calibration and memory budgets; a run over its budget is stopped), its GPU memory where
 * nvidia-smi reports it (for calibration and admission), and each run's progress from its
 * summary.json, for the active-job view and the catalog.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../../errors.js';
import { FILES, readSummaryHead } from '../../store/run-dir.js';
import { stopJob } from '../job/cancel-job.js';
import type { Job, JobContext } from '../job/job.js';
import type { ResourceSource } from './resource-sampler.js';

export interface RssMonitorOptions {
  source: ResourceSource;
  /** Least time between two samples. */
  intervalMs: number;
  ctx: JobContext;
}

export class RssMonitor {
  private readonly opts: RssMonitorOptions;
  private sampling: Promise<void> | null = null;
  private lastSampleMs = 0;

  constructor(opts: RssMonitorOptions) {
    this.opts = opts;
  }

  /**
   * Starts a sample of `running` when the interval has passed and none is in progress. The
   * /proc walk takes milliseconds: it runs beside the ticks so a child's exit is never kept waiting behind it.
   */
  poke(running: readonly Job[]): void {
    if (this.sampling || Date.now() - this.lastSampleMs < this.opts.intervalMs) return;
    this.lastSampleMs = Date.now();
    this.sampling = this.sample(running)
      .catch((err: unknown) => this.opts.ctx.log.warn(`sampling running runs: ${errorMessage(err)}`))
      .finally(() => {
        this.sampling = null;
      });
  }

  /** Resolves once the sample in progress, if any, is over. */
  async settled(): Promise<void> {
    await this.sampling;
  }

  private async sample(running: readonly Job[]): Promise<void> {
    const { source, ctx } = this.opts;
    const jobs = running.filter((j) => j.viaSubprocess && j.pid !== null && !j.exit);
    if (jobs.length === 0) return;
    const pids = jobs.map((j) => j.pid!);
    // The nvidia-smi query (tens of ms, more on a busy GPU) runs alongside the /proc walk.
    const vramReading = this.sampleVram(pids);
    let rss: Map<number, number>;
    try {
      rss = source.processTreesRssMb ? await source.processTreesRssMb(pids) : await processTreesRssMbOneByOne(source, pids);
    } catch (err) {
      ctx.log.warn(`process RSS sample failed: ${errorMessage(err)}`);
      return;
    }
    for (const job of jobs) {
      await this.readProgress(job);
      const mb = rss.get(job.pid!);
      if (mb === undefined || mb <= 0) continue;
      job.rssMb = Math.round(mb);
      job.peakRssMb = Math.max(job.peakRssMb, mb);
      const budget = job.spec.memoryBudgetMb;
      if (budget !== undefined && mb > budget && !job.overBudget && !job.exit) {
        job.overBudget = { rssMb: mb, budgetMb: budget };
        ctx.log.warn(`run ${job.runId}: its processes use ${Math.round(mb)} MB, over its memory budget of ${budget} MB; stopping it`);
        stopJob(job, ctx);
      }
    }
    await this.sampleCpu(jobs);
    // Applied after the budgets, which a slow nvidia-smi must not hold up.
    const vram = await vramReading;
    for (const job of jobs) {
      const vmb = vram?.get(job.pid!);
      if (vmb === undefined || job.exit) continue;
      job.vramMb = Math.round(vmb);
      job.peakVramMb = Math.max(job.peakVramMb, vmb);
    }
  }

  /** CPU seconds of each tree (the same process-table walk as the RSS): their rate calibrates the graph's cores. */
  private async sampleCpu(jobs: Job[]): Promise<void> {
    let cpu: Map<number, number> | null;
    try {
      cpu = (await this.opts.source.processTreesCpuSec?.(jobs.map((j) => j.pid!))) ?? null;
    } catch (err) {
      this.opts.ctx.log.warn(`process CPU sample failed: ${errorMessage(err)}`);
      return;
    }
    if (!cpu) return;
    const now = Date.now();
    for (const job of jobs) {
      const sec = cpu.get(job.pid!);
      if (sec === undefined || sec <= 0 || job.exit) continue;
      if (!job.cpu) job.cpu = { firstSec: sec, firstAtMs: now, lastSec: sec, lastAtMs: now };
      else if (sec >= job.cpu.lastSec) Object.assign(job.cpu, { lastSec: sec, lastAtMs: now });
    }
  }

  private async sampleVram(pids: number[]): Promise<Map<number, number> | null> {
    try {
      return (await this.opts.source.processTreesVramMb?.(pids)) ?? null;
    } catch (err) {
      this.opts.ctx.log.warn(`process VRAM sample failed: ${errorMessage(err)}`);
      return null;
    }
  }

  private async readProgress(job: Job): Promise<void> {
    try {
      const st = await stat(join(job.runDir, FILES.summary));
      if (st.mtimeMs === job.summaryMtimeMs) return;
      job.summaryMtimeMs = st.mtimeMs;
      // Progress only: summary.json's state and aggregates, not the records.
      const s = await readSummaryHead(job.runDir);
      job.lastSummary = s;
      if (s.episodesDone !== job.episodesDone) {
        job.episodesDone = s.episodesDone;
        this.opts.ctx.catalog.upsertRun({
          id: job.runId,
          episodesDone: s.episodesDone,
          statusCounts: s.statusCounts,
          aggregateMetrics: s.aggregateMetrics,
        });
      }
    } catch {
      // mid-rename or gone: next sample
    }
  }
}

async function processTreesRssMbOneByOne(source: ResourceSource, pids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const pid of pids) out.set(pid, await source.processTreeRssMb(pid));
  return out;
}
