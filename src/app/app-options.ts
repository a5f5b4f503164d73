/** What buildApp takes and what it gives back. */
import type { JobScheduler, JobSchedulerOptions } from '../scheduler/job-scheduler.js';
import type { SchedulerLogger } from '../scheduler/types.js';
import type { QueryLimits } from '../resolvers/limits.js';
import type { ScaleoutHead, ScaleoutHeadOptions } from '../scaleout/scaleout-head.js';

export interface AppOptions {
  /** Holds `eval_runs/` and the catalog `db.json`. */
  outputsDir: string;
  /** Interface to listen on. Anything but loopback requires `token`. @default '127.0.0.1' */
  host?: string;
  /** Bearer token every HTTP, SSE and WebSocket client must present. @default process.env.EVAL_API_TOKEN */
  token?: string;
  /** Browser origins allowed besides this server's own and loopback (e.g. a dev server). @default none */
  allowedOrigins?: string[];
  /**
   * Host names a request may address the server by, besides loopback ones (localhost, 127.x,
   * [::1]); `.example.org` allows every name under example.org. Checked whenever the server
   * listens on loopback, and beyond loopback once any is given (there the token guards it). @default none
   */
  allowedHosts?: string[];
  /** Passed to the JobScheduler (outputsDir and backendUrl are set by the app). */
  scheduler?: Partial<JobSchedulerOptions>;
  /** The dashboard's build. @default WEB_DIST_DIR */
  webDir?: string;
  /** Query depth and cost limits. @default depth 12, cost 50000 */
  limits?: QueryLimits;
  /** @default lines on stderr prefixed `[server]` */
  logger?: SchedulerLogger;
  /**
   * Scale-out (`serve --redis`): admitted runs go on BullMQ in this Redis for `evalctl worker`s
   * (docs/scale-out.md). @default none: runs run on this machine
   */
  redis?: Omit<ScaleoutHeadOptions, 'log'>;
}

export interface App {
  /** Listens on `port` (0 or absent: any free port). Resolves with the base URL (e.g. http://127.0.0.1:4000). */
  start(port?: number): Promise<{ url: string; port: number }>;
  /**
   * Stops serving, then waits for the running runs to finish (no queued run starts meanwhile;
   * queued runs stay queued for the next server), then stops the scheduler. With
   * `cancelRunning` the running runs are cancelled instead (also when given to a later call
   * while the first one waits). Idempotent.
   */
  stop(opts?: { cancelRunning?: boolean }): Promise<void>;
  readonly scheduler: JobScheduler;
  /** The scale-out head, with `redis`. */
  readonly scaleout?: ScaleoutHead | undefined;
}
