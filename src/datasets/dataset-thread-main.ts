/** A worker thread's entry that indexes a dataset or reads some of its samples (dataset-thread.ts) and posts the answer, or the error. */
import { parentPort, workerData } from 'node:worker_threads';
import { DatasetInvalidError } from './dataset-invalid-error.js';
import { indexDataset, readSplitSamples } from './dataset-index.js';
import type { DatasetJob } from './dataset-thread.js';

const job = workerData as DatasetJob;
const work =
  job.kind === 'index'
    ? indexDataset(job.dir, job.name, job.source)
    : readSplitSamples(job.dir, job.name, job.source, job.split, job.offset, job.count);
work.then(
  (result) => parentPort!.postMessage({ result }),
  (err: unknown) => {
    if (err instanceof DatasetInvalidError) {
      parentPort!.postMessage({ invalid: { fault: err.fault, problem: err.problem } });
      return;
    }
    const e = err as { code?: unknown; message?: unknown };
    parentPort!.postMessage({ error: { code: typeof e.code === 'string' ? e.code : undefined, message: String(e.message ?? err) } });
  },
);
