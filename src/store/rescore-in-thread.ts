/**
 * The server's rescoring: computed in a worker thread with a time limit, then written here. A
 * user's scorer config runs on every stored answer (a `pattern` regex among them), and no check
 * can rule out every regex that takes exponential time; on the server's own thread one would
 * stall every request. The thread is ended at the limit and nothing is written.
 */
import { Worker } from 'node:worker_threads';
import { CodedError, ERROR_CODES, type ErrorCode } from '../errors.js';
import { RESCORE_THREAD_MAIN } from '../paths.js';
import type { RunReport } from './report.js';
import type { RescoreFile } from './rescores.js';
import { writeRescoring, type RescoreRunOptions } from './rescore-run.js';

/** How long one rescoring may compute before it is given up: far more than any scorer takes per answer on a 100,000-episode run. */
export const RESCORE_TIME_LIMIT_MS = 120_000;

/** A rescoring that did not finish within its time limit (nothing was written). */
export class RescoreTimeoutError extends CodedError {
  constructor(limitMs: number, scorer: string) {
    super(
      'RESCORE_TIMEOUT',
      `rescoring with "${scorer}" took longer than ${limitMs / 1000} s and was stopped; nothing was written (a pattern that backtracks on these answers? simplify it)`,
    );
  }
}

/** The code the thread's error had (BAD_USER_INPUT, CONFLICT, UNKNOWN_SCORER …), kept so the API answers as in-process. */
const knownCode = (code: string | undefined): ErrorCode =>
  code !== undefined && Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : 'INTERNAL_SERVER_ERROR';

export async function rescoreRunInThread(
  o: RescoreRunOptions,
  limitMs: number = RESCORE_TIME_LIMIT_MS,
): Promise<{ rescore: RescoreFile; report: RunReport }> {
  const worker = new Worker(RESCORE_THREAD_MAIN, { workerData: o, name: `rescore ${o.scorer}` });
  let timer: NodeJS.Timeout | undefined;
  try {
    const rescore = await new Promise<RescoreFile>((resolve, reject) => {
      timer = setTimeout(() => reject(new RescoreTimeoutError(limitMs, o.scorer)), limitMs);
      worker.once('message', (m: { rescore?: RescoreFile; error?: { code: string; message: string } }) => {
        if (m.rescore) resolve(m.rescore);
        else reject(new CodedError(knownCode(m.error?.code), m.error?.message ?? 'rescoring failed'));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new CodedError('INTERNAL_SERVER_ERROR', `the rescoring thread exited (code ${code})`)));
    });
    return await writeRescoring(o.runDir, rescore);
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}
