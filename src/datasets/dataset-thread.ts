/**
 * Dataset reads the server answers requests from, done in a worker thread: parsing hundreds of
 * MB of records on the server's own thread stalled every request (health checks included) for
 * seconds. At most two threads read at once; each ends with its job, so what it parsed is freed.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { CodedError } from '../errors.js';
import { DATASET_THREAD_MAIN } from '../paths.js';
import { DatasetInvalidError, type DatasetFault } from './dataset-invalid-error.js';
import { indexDataset, readSplitSamples, type DatasetIndex } from './dataset-index.js';
import type { DatasetSource, Sample } from './types.js';

interface Where {
  dir: string;
  name: string;
  source: DatasetSource;
}

export type DatasetJob = (Where & { kind: 'index' }) | (Where & { kind: 'samples'; split: string; offset: number; count: number });

type Answer = { result: unknown } | { invalid: { fault: DatasetFault; problem: string } } | { error: { code?: string; message: string } };

/** Threads reading at once; more wait their turn. */
const MAX_THREADS = 2;
let active = 0;
const waiting: Array<() => void> = [];

async function slot(): Promise<() => void> {
  if (active >= MAX_THREADS) await new Promise<void>((r) => waiting.push(r));
  active += 1;
  return () => {
    active -= 1;
    waiting.shift()?.();
  };
}

function inThisThread(job: DatasetJob): Promise<unknown> {
  return job.kind === 'index'
    ? indexDataset(job.dir, job.name, job.source)
    : readSplitSamples(job.dir, job.name, job.source, job.split, job.offset, job.count);
}

async function run(job: DatasetJob, signal?: AbortSignal): Promise<unknown> {
  signal?.throwIfAborted();
  // Without the built thread entry (the sources run directly) the work is done here.
  if (!existsSync(DATASET_THREAD_MAIN)) return inThisThread(job);
  const release = await slot();
  let worker: Worker;
  try {
    worker = new Worker(DATASET_THREAD_MAIN, { workerData: job, name: `dataset ${job.name}` });
  } catch (err) {
    release();
    throw err;
  }
  const onAbort = () => void worker.terminate();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const answer = await new Promise<Answer>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(signal?.aborted ? signal.reason : new CodedError('INTERNAL_SERVER_ERROR', `the dataset thread exited (code ${code})`)),
      );
    });
    if ('invalid' in answer) throw new DatasetInvalidError(answer.invalid.fault, answer.invalid.problem);
    if ('error' in answer) throw new Error(answer.error.message);
    return answer.result;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await worker.terminate();
    release();
  }
}

export const indexInThread = (where: Where): Promise<DatasetIndex> => run({ kind: 'index', ...where }) as Promise<DatasetIndex>;

export const samplesInThread = (where: Where, split: string, offset: number, count: number, signal?: AbortSignal): Promise<Sample[]> =>
  run({ kind: 'samples', ...where, split, offset, count }, signal) as Promise<Sample[]>;
