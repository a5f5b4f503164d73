/** Graceful stop's wait for the running runs. */
import type { JobScheduler } from '../scheduler/job-scheduler.js';
import type { SchedulerLogger } from '../scheduler/types.js';

/**
 * Waits for the running runs to finish, admitting nothing meanwhile (an eval process ends
 * with the server that started it, so leaving runs to finish means waiting for them).
 * `hurry()` (a later stop with cancelRunning) cuts the wait short; the runs are then cancelled.
 */
export function runDrainer(scheduler: JobScheduler, log: SchedulerLogger) {
  let cancelOnStop = false;
  let hurryDrain: (() => void) | undefined;
  return {
    get cancelRunning() {
      return cancelOnStop;
    },
    hurry() {
      cancelOnStop = true;
      hurryDrain?.();
    },
    async drain(): Promise<void> {
      if (cancelOnStop) return;
      const running = () => scheduler.drainableRuns();
      if (running() === 0) return;
      const release = scheduler.acquireInteractiveLock('the server is stopping');
      log.info(`waiting for ${running()} running run(s) to finish before stopping (stop again with cancelRunning to cancel them)`);
      try {
        await new Promise<void>((done) => {
          const timer = setInterval(check, 250);
          const off = scheduler.subscribe(() => check());
          function check() {
            if (!cancelOnStop && running() > 0) return;
            clearInterval(timer);
            off();
            hurryDrain = undefined;
            done();
          }
          hurryDrain = check;
        });
      } finally {
        release();
      }
    },
  };
}
