/**
 * Finalising a reaped job: its final status (FAILED over its memory budget, on an error or on a
 * storage fault, ABORTED (HUNG) when it was killed for its silence, ABORTED or CANCELLED when
 * its process died first, else what the run wrote),
 * _DONE, the process record, its shared hosts released, the catalog row and the events. A disk
 * that refuses the final writes never leaves the run RUNNING: the catalog and the API get the
 * final state, and the write is tried again each tick (see retryUnrecorded).
 */
import { existsSync } from 'node:fs';
import { CodedError, errorMessage } from '../../errors.js';
import { isTerminalRunStatus } from '../../statuses.js';
import { restoreUnplayed } from '../../store/attempts.js';
import { withRecordsOnDisk } from '../../store/records-on-disk.js';
import { catalogRunFromSummary } from '../../store/catalog.js';
import { isDone, readSummary, touchDone, writeSummary } from '../../store/run-dir.js';
import { writeReport } from '../../store/report.js';
import { describeStorage, isStorageCode, storageCodeOf, storageCodeOfExit, type StorageCode } from '../../store/storage-fault.js';
import type { RunSummary } from '../../store/types.js';
import type { Job, JobContext } from './job.js';
import { currentSummary } from './job-summary.js';
import { earlyExitChange, hungChange, killGroupLeftovers, recordProcessExit } from './subprocess-job.js';

export async function finalizeJob(job: Job, ctx: JobContext): Promise<RunSummary> {
  const exit = job.exit!;
  killGroupLeftovers(job);
  // An in-backend run's own summary lists no records (they are in records.jsonl): read with them, unless the disk refuses.
  let summary =
    exit.kind === 'inProcess' && exit.summary.episodes.length === exit.summary.episodesDone
      ? exit.summary
      : await readSummary(job.runDir).catch(() => (exit.kind === 'inProcess' ? exit.summary : lastKnownSummary(job)));
  const storage: StorageCode | null = !existsSync(job.runDir)
    ? 'RUN_DIR_MISSING'
    : (job.storageFault ??
      (exit.kind === 'error'
        ? storageCodeOf(exit.error, job.runDir)
        : exit.kind === 'process'
          ? storageCodeOfExit(exit.exit.exitCode)
          : null));
  let change: ((s: RunSummary) => void) | null = null;
  const now = new Date().toISOString();
  if (job.overBudget) {
    const { rssMb, budgetMb } = job.overBudget;
    change = (s) => {
      s.status = 'FAILED';
      s.error = {
        code: 'OUT_OF_BUDGET',
        message: `the run's processes used ${Math.round(rssMb)} MB, over its memory budget of ${budgetMb} MB; stopped`,
      };
    };
  } else if (job.hung && exit.kind === 'process' && storage !== 'RUN_DIR_MISSING' && summary.status !== 'COMPLETED') {
    // Whatever it wrote as it went down (a late SIGTERM's CANCELLED), the scheduler stopped it for its silence.
    change = hungChange(job, exit.exit);
  } else if (exit.kind === 'error') {
    change = (s) => {
      s.status = 'FAILED';
      s.error = {
        code: exit.error instanceof CodedError ? exit.error.code : (storage ?? 'INTERNAL_SERVER_ERROR'),
        // A raw errno says what failed, not why: say the storage fault first.
        message:
          storage !== null && !(exit.error instanceof CodedError)
            ? `${describeStorage(storage, job.runDir)} (${errorMessage(exit.error)})`
            : errorMessage(exit.error),
      };
    };
  } else if (exit.kind === 'process' && (storage === 'RUN_DIR_MISSING' || !isTerminalRunStatus(summary.status))) {
    // A terminal summary without _DONE is kept: the process ended between the two writes.
    change = await earlyExitChange(job, exit.exit, storage);
  }
  // A process that died between an episode's record and the next summary write: those records count.
  if (change && exit.kind === 'process' && storage !== 'RUN_DIR_MISSING') {
    const fuller = await withRecordsOnDisk(job.runDir, summary).catch(() => null);
    if (fuller) summary = fuller;
  }
  // A retry that ended before playing all it was to play: the earlier records of the rest come back.
  const restored = storage === null ? await restoreUnplayed(job.runDir, summary).catch(() => null) : null;
  if (restored) {
    summary = restored;
    change ??= () => {};
  }
  let writeFault: StorageCode | null = null;
  let summaryOnDisk = true;
  if (change) {
    summary = structuredClone(summary);
    change(summary);
    summary.finishedAt ??= now;
    delete summary.pid;
    summary.seq += 1;
    try {
      await writeSummary(job.runDir, summary);
      // The eval process ended before it could write its report: the one here covers the episodes it finished.
      await writeReport(job.runDir, summary).catch((err: unknown) => ctx.log.warn(`run ${job.runId}: report.json: ${errorMessage(err)}`));
    } catch (err) {
      summaryOnDisk = false;
      writeFault = storageCodeOf(err, job.runDir);
      if (writeFault === null) ctx.log.error(`run ${job.runId}: writing its final summary: ${errorMessage(err)}`);
    }
  }
  let doneOnDisk = isDone(job.runDir);
  if (!doneOnDisk) {
    try {
      await touchDone(job.runDir);
      doneOnDisk = true;
    } catch (err) {
      writeFault ??= storageCodeOf(err, job.runDir);
    }
  }
  if (writeFault !== null && !isStorageCode(summary.error?.code) && summary.status !== 'COMPLETED' && summary.status !== 'CANCELLED') {
    // The disk refused the run's end too: that is why its process stopped.
    const before = summary.error?.message;
    summary = {
      ...summary,
      status: 'FAILED',
      error: { code: writeFault, message: `${describeStorage(writeFault, job.runDir)}${before ? `; ${before}` : ''}` },
    };
  }
  if (!summaryOnDisk || !doneOnDisk) {
    ctx.unrecorded.set(job.runId, { runDir: job.runDir, summary, summaryOnDisk });
    ctx.log.warn(
      `run ${job.runId}: ${writeFault ? describeStorage(writeFault, job.runDir) : 'its final state could not be written'}; its end is kept in memory and written once the disk takes it`,
    );
  }
  if (job.viaSubprocess && job.pid !== null && existsSync(job.runDir)) await recordProcessExit(job, exit, summary, ctx);
  ctx.hosts.release(job.runId);
  job.trace?.end(summary.status, summary.error);
  ctx.catalog.upsertRun(catalogRunFromSummary(summary, { viaSubprocess: job.viaSubprocess, pid: job.pid }));
  ctx.log.info(
    `run ${job.runId} ${summary.status.toLowerCase()} (${summary.episodesDone}/${summary.episodeCount} episodes)${summary.error && (storage || job.hung) ? `: ${summary.error.message}` : ''}`,
  );
  ctx.emit({ type: 'run', runId: job.runId, summary });
  ctx.emit({ type: 'queue' });
  return summary;
}

/**
 * summary.json is gone or unreadable: start from the last one read while the run ran, with a
 * seq above any the eval process could have written since (one per episode left, its launch, its start and
 * its end), so every watcher takes the final state as newer.
 */
async function lastKnownSummary(job: Job): Promise<RunSummary> {
  const base = job.lastSummary ? structuredClone(job.lastSummary) : await currentSummary(job);
  base.seq += Math.max(0, base.episodeCount - base.episodesDone) + 3;
  return base;
}

/**
 * Writes the final summaries and _DONE the disk refused before; drops each once written. A run
 * whose dir is gone stays (the API answers from it) with nothing to write.
 */
export async function retryUnrecorded(ctx: JobContext): Promise<void> {
  for (const [runId, u] of [...ctx.unrecorded]) {
    if (!existsSync(u.runDir)) continue;
    try {
      if (!u.summaryOnDisk) {
        await writeSummary(u.runDir, u.summary);
        u.summaryOnDisk = true;
      }
      if (!isDone(u.runDir)) await touchDone(u.runDir);
      ctx.unrecorded.delete(runId);
      ctx.log.info(`run ${runId}: its final state is on disk now`);
    } catch {
      // still refused: next tick
    }
  }
}
