/**
 * The queued jobs, kept in admission order (priority desc, then submission order), and the
 * waiting reason a job gets when it joins, before the next admission pass gives it a real one.
 */
import { lockedReason } from './admission.js';
import { runsBefore, type Job } from '../job/job.js';

export class JobQueue implements Iterable<Job> {
  private readonly jobs: Job[] = [];

  get length(): number {
    return this.jobs.length;
  }

  [Symbol.iterator](): Iterator<Job> {
    return this.jobs[Symbol.iterator]();
  }

  map<T>(f: (job: Job, index: number) => T): T[] {
    return this.jobs.map(f);
  }

  /** Inserts in admission order (binary search). */
  insert(job: Job): void {
    let lo = 0;
    let hi = this.jobs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runsBefore(this.jobs[mid]!, job)) lo = mid + 1;
      else hi = mid;
    }
    this.jobs.splice(lo, 0, job);
  }

  has(runId: string): boolean {
    return this.jobs.some((j) => j.runId === runId);
  }

  /** Takes the job out of the queue; undefined when it is not queued. */
  remove(runId: string): Job | undefined {
    const i = this.jobs.findIndex((j) => j.runId === runId);
    return i >= 0 ? this.jobs.splice(i, 1)[0] : undefined;
  }

  /** Takes the jobs with these run ids out of the queue, in queue order. */
  take(runIds: ReadonlySet<string>): Job[] {
    const taken = this.jobs.filter((j) => runIds.has(j.runId));
    for (let i = this.jobs.length - 1; i >= 0; i--) if (runIds.has(this.jobs[i]!.runId)) this.jobs.splice(i, 1);
    return taken;
  }

  /** Why `job` (not yet inserted) will wait, as far as the queue alone can tell. */
  joiningReason(job: Job, lockHolder: string | null): string {
    if (lockHolder !== null) return lockedReason(lockHolder);
    const ahead = this.jobs.filter((j) => runsBefore(j, job)).length;
    if (ahead === 0) return 'waiting for the next admission check';
    const higher = this.jobs.filter((j) => j.spec.priority > job.spec.priority).length;
    return higher > 0
      ? `behind ${higher} higher-priority job${higher === 1 ? '' : 's'}`
      : `behind ${ahead} earlier job${ahead === 1 ? '' : 's'}`;
  }
}
