/** A worker thread's entry that computes one rescoring (rescore-in-thread.ts) and posts it back, or the error's code and message. */
import { parentPort, workerData } from 'node:worker_threads';
import { computeRescore, type RescoreRunOptions } from './rescore-run.js';

const options = workerData as RescoreRunOptions;
computeRescore(options).then(
  (rescore) => parentPort!.postMessage({ rescore }),
  (err: unknown) => {
    const e = err as { code?: unknown; message?: unknown };
    parentPort!.postMessage({
      error: { code: typeof e.code === 'string' ? e.code : 'INTERNAL_SERVER_ERROR', message: String(e.message ?? err) },
    });
  },
);
