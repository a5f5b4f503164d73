/**
 * The head of a scale-out fleet (`evalctl serve --redis URL`): admitted runs go on BullMQ as a
 * flow (the run as parent, one child job per shard, `shardJobId` ids so adding a run again
 * cannot duplicate a shard, run priority → job priority); workers claim shards, commit each
 * finished episode and report each shard's end over the server's HTTP (routes in
 * http/scaleout-routes.ts); a cancel is published on the cancel channel. Redis unreachable at
 * start or submit is REDIS_UNAVAILABLE; Redis gone for longer than `redisLostMs` while runs are
 * on the fleet ends them ABORTED (REDIS_LOST) with their committed episodes kept. A shard job
 * that fails for good on the queue (attempts used up, see shard-flow.ts) ends its run FAILED
 * (SHARD_FAILED), its committed episodes kept for a retry. A shard job that goes back on the
 * queue (its worker handed it back, or it stalled) reads WAITING again in `shardsOf`, heard from
 * the queue's own events: a worker cut off from the head cannot say so itself. A Redis that
 * forgot a run's jobs (restarted without its data, however briefly) is noticed on reconnect and
 * every few seconds (the run's parent job gone): the shards with episodes not in the run
 * directory go on the queue again; where Redis refuses them, the run ends ABORTED (REDIS_LOST)
 * with its committed episodes kept, for a retry.
 */
import { FlowProducer, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { CodedError, ConflictError, errorMessage } from '../errors.js';
import type { RemoteRuns } from '../scheduler/job/remote-runs.js';
import type { SchedulerLogger } from '../scheduler/types.js';
import type { RunSpec, RunSummary } from '../store/types.js';
import type { ClaimAnswer, CommitAnswer, CommitRequest, ShardEndRequest, WorkerHeartbeat } from './protocol.js';
import { CANCEL_CHANNEL } from './protocol.js';
import { RemoteRun, type ShardView } from './remote-run.js';
import { addRunFlow, RUN_QUEUE, runJobId, SHARD_QUEUE } from './shard-flow.js';
import { redisClient, RedisUnavailableError, shownRedisUrl } from './redis-connection.js';
import { currentAttemptOf, readAttempts } from '../store/attempts.js';

/** How often the head checks that Redis still holds the jobs of its runs on the fleet (besides at each reconnect). */
export const FORGOT_CHECK_MS = 2000;

export interface ScaleoutHeadOptions {
  /** redis://host:port[/db] */
  redisUrl: string;
  /** Redis unreachable this long while runs are on the fleet ends them ABORTED (REDIS_LOST). @default 10000 */
  redisLostMs?: number;
  /** A worker not heard from for this long is left out of `workers`. @default 30000 */
  workerGoneMs?: number;
  log: SchedulerLogger;
}

/** A worker as the head last heard from it. */
export interface WorkerView extends WorkerHeartbeat {
  lastHeartbeat: string;
}

export class ScaleoutHead implements RemoteRuns {
  readonly #opts: Required<Omit<ScaleoutHeadOptions, 'log'>> & { log: SchedulerLogger };
  readonly #redis: Redis;
  readonly #bull: Redis;
  readonly #flows: FlowProducer;
  readonly #runQueue: Queue;
  /** Where the state of a shard job that went back on the queue is checked. */
  readonly #shardQueue: Queue;
  /** Where a shard job that failed for good, or went back on the queue, is heard of (its own blocking connection). */
  readonly #shardEvents: QueueEvents;
  readonly #eventsConnection: Redis;
  readonly #runs = new Map<string, RemoteRun>();
  /** The attempt each run on the fleet is in: its shard jobs' ids (shard-flow.ts). */
  readonly #attempts = new Map<string, number>();
  readonly #workers = new Map<string, WorkerView>();
  readonly #executing = new Set<Promise<RunSummary>>();
  /** Every claim in the order it came (the last 1000), for `claims()`. */
  readonly #claims: { runId: string; shard: number; worker: string }[] = [];
  /** Runs whose flow is on the queue: the ones a Redis that forgot its data can lose. */
  readonly #queued = new Set<string>();
  /** The check for runs Redis forgot, while one is under way; `#checkAgain` asks for one more after it. */
  #forgotCheck: Promise<void> | null = null;
  #checkAgain = false;
  #lostSince: number | null = null;
  #watch: NodeJS.Timeout | null = null;
  #forgotWatch: NodeJS.Timeout | null = null;
  #closing: Promise<void> | null = null;

  constructor(opts: ScaleoutHeadOptions) {
    this.#opts = { redisLostMs: 10_000, workerGoneMs: 30_000, ...opts };
    // Commands fail at once while Redis is down (no offline queue), so a submit is refused instead of hanging.
    this.#redis = redisClient(opts.redisUrl, { failFast: true });
    this.#redis.on('error', () => {});
    this.#redis.on('close', () => {
      this.#lostSince ??= Date.now();
    });
    this.#redis.on('ready', () => {
      this.#lostSince = null;
      // A Redis back after a restart may have come back empty.
      void this.#checkForgotten();
    });
    // BullMQ's own connection: it queues commands while reconnecting, but gives up on each after one retry.
    const bull = redisClient(opts.redisUrl, { failFast: false });
    bull.options.maxRetriesPerRequest = 1;
    bull.on('error', () => {});
    this.#bull = bull;
    this.#flows = new FlowProducer({ connection: bull });
    this.#runQueue = new Queue(RUN_QUEUE, { connection: bull });
    this.#shardQueue = new Queue(SHARD_QUEUE, { connection: bull });
    // A lost Redis is watched through the connection's events (#checkRedis), not through each object's errors.
    this.#flows.on('error', () => {});
    this.#runQueue.on('error', () => {});
    this.#shardQueue.on('error', () => {});
    const events = redisClient(opts.redisUrl, { failFast: false });
    events.on('error', () => {});
    this.#eventsConnection = events;
    this.#shardEvents = new QueueEvents(SHARD_QUEUE, { connection: events, autorun: false });
    this.#shardEvents.on('error', () => {});
    // 'failed' is a job moved to the failed set: a try that BullMQ will repeat is a 'delayed' or 'waiting' event.
    this.#shardEvents.on('failed', ({ jobId, failedReason }) => void this.#shardJobFailed(jobId, failedReason));
    // Back on the queue: a try that failed and will be repeated after its backoff ('delayed'), a shard
    // handed back untouched ('delayed'), one taken back from a stalled worker or retried at once ('waiting' from 'active').
    this.#shardEvents.on('delayed', ({ jobId }) => void this.#shardJobReturned(jobId));
    this.#shardEvents.on('waiting', ({ jobId, prev }) => {
      if (prev === 'active') void this.#shardJobReturned(jobId);
    });
  }

  /** Connects to Redis; REDIS_UNAVAILABLE when it cannot be reached. */
  async start(): Promise<void> {
    try {
      await this.#redis.connect();
      await this.#redis.ping();
      if (this.#bull.status === 'wait') await this.#bull.connect();
      await this.#eventsConnection.connect();
    } catch (err) {
      // Nothing keeps reconnecting behind a refused start.
      this.#redis.disconnect();
      this.#bull.disconnect();
      this.#eventsConnection.disconnect();
      throw new RedisUnavailableError(this.#opts.redisUrl, err);
    }
    void this.#shardEvents.run().catch((err: unknown) => this.#opts.log.warn(`shard events: ${errorMessage(err)}`));
    this.#watch = setInterval(() => void this.#checkRedis(), Math.min(500, this.#opts.redisLostMs));
    this.#watch.unref();
    this.#forgotWatch = setInterval(() => void this.#checkForgotten(), FORGOT_CHECK_MS);
    this.#forgotWatch.unref();
  }

  async assertReachable(): Promise<void> {
    if (this.#redis.status !== 'ready') throw new RedisUnavailableError(this.#opts.redisUrl, `connection ${this.#redis.status}`);
  }

  /**
   * Resolves once the connection is ready, waiting up to `ms` for one that is reconnecting: a
   * run admitted during a short Redis restart goes on the queue instead of failing.
   */
  async #reachableWithin(ms: number, signal: AbortSignal): Promise<void> {
    const redis = this.#redis;
    if (redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off('ready', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      redis.on('ready', done);
      signal.addEventListener('abort', done, { once: true });
    });
    await this.assertReachable();
  }

  execute(run: { spec: RunSpec; runDir: string; signal: AbortSignal; onProgress(n: number): void }): Promise<RunSummary> {
    const p = this.#execute(run);
    this.#executing.add(p);
    const forget = () => this.#executing.delete(p);
    p.then(forget, forget);
    return p;
  }

  async #execute(run: { spec: RunSpec; runDir: string; signal: AbortSignal; onProgress(n: number): void }): Promise<RunSummary> {
    const { spec } = run;
    let resolveEnd!: (s: RunSummary) => void;
    const ended = new Promise<RunSummary>((r) => {
      resolveEnd = r;
    });
    const remote = await RemoteRun.open(spec, run.runDir, { onProgress: run.onProgress, onEnd: (s) => resolveEnd(s) });
    const attempt = currentAttemptOf(await readAttempts(run.runDir));
    this.#runs.set(spec.runId, remote);
    this.#attempts.set(spec.runId, attempt);
    const onAbort = () => void this.#cancel(remote);
    run.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (remote.complete) await remote.end('COMPLETED');
      else {
        await this.#reachableWithin(this.#opts.redisLostMs, run.signal);
        await this.#addFlow(spec, attempt);
        this.#queued.add(spec.runId);
        this.#opts.log.info(`run ${spec.runId}: ${remote.shards.length} shard(s) on the queue`);
      }
    } catch (err) {
      await remote.end('FAILED', { code: err instanceof CodedError ? err.code : 'REDIS_UNAVAILABLE', message: errorMessage(err) });
    }
    const summary = await ended;
    run.signal.removeEventListener('abort', onAbort);
    this.#runs.delete(spec.runId);
    this.#attempts.delete(spec.runId);
    this.#queued.delete(spec.runId);
    // The flow's jobs are of no more use: the run dir is the record.
    await this.#runQueue.remove(runJobId(spec.runId, attempt), { removeChildren: true }).catch(() => {});
    return summary;
  }

  /**
   * Puts the run's flow (or the shards `only`) on the queue. A flow Redis refused leaves its
   * scripts marked loaded on the connection although Redis never took them (a refused EVAL),
   * and the next flow would fail with NOSCRIPT: the connection starts afresh.
   */
  async #addFlow(spec: RunSpec, attempt: number, only?: readonly number[]): Promise<void> {
    try {
      await addRunFlow(this.#flows, spec, attempt, only);
    } catch (err) {
      if (redisRefused(err)) this.#bull.disconnect(true);
      throw err;
    }
  }

  /** `probe`: only the spec and what is committed, for a worker that first checks the shard fits. */
  claim(req: { runId: string; shard: number; worker: string; probe?: boolean }): ClaimAnswer {
    const run = this.#runs.get(req.runId);
    if (!run || run.ended) return { action: 'skip', reason: `run ${req.runId} is not running on this server` };
    if (!req.probe) {
      run.claim(req.shard, req.worker);
      if (this.#claims.length > 2000) this.#claims.splice(0, 1000);
      this.#claims.push({ runId: req.runId, shard: req.shard, worker: req.worker });
      this.#opts.log.info(`run ${req.runId}: shard ${req.shard} taken by ${req.worker}`);
    }
    return { action: 'play', spec: run.spec, committed: run.committedIn(req.shard) };
  }

  async commit(req: CommitRequest): Promise<CommitAnswer> {
    const run = this.#runs.get(req.runId);
    if (!run) throw new ConflictError(`run ${req.runId} is not running on this server`);
    return { committed: await run.commit(req.shard, req.index, req.files) };
  }

  async shardEnd(req: ShardEndRequest): Promise<void> {
    const run = this.#runs.get(req.runId);
    if (!run) return;
    if (req.status !== 'COMPLETED') this.#opts.log.warn(`run ${req.runId}: shard ${req.shard} ended ${req.status} on ${req.worker}`);
    await run.shardEnded(req.shard, req.status, req.error ?? null);
    if (run.ended) await this.#publishCancel(req.runId);
  }

  /** The shards workers took, oldest first (the last 1000). */
  claims(): { runId: string; shard: number; worker: string }[] {
    return this.#claims.slice(-1000);
  }

  heartbeat(hb: WorkerHeartbeat): void {
    this.#workers.set(hb.worker, { ...hb, lastHeartbeat: new Date().toISOString() });
  }

  /** The workers heard from within `workerGoneMs`, by name. */
  workers(): WorkerView[] {
    const cutoff = Date.now() - this.#opts.workerGoneMs;
    return [...this.#workers.values()]
      .filter((w) => Date.parse(w.lastHeartbeat) >= cutoff)
      .sort((a, b) => (a.worker < b.worker ? -1 : a.worker > b.worker ? 1 : 0));
  }

  /** A running run's shards; null when the run is not on the fleet now. */
  shardsOf(runId: string): ShardView[] | null {
    const run = this.#runs.get(runId);
    return run ? run.shards.map((s) => ({ ...s })) : null;
  }

  /** Ends every run on the fleet ABORTED (their committed episodes stay), closes the Redis connections. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#watch) clearInterval(this.#watch);
      if (this.#forgotWatch) clearInterval(this.#forgotWatch);
      for (const run of this.#runs.values()) {
        await run.end('ABORTED', { code: 'ABORTED', message: 'the backend stopped while the run was on the scale-out workers' });
        await this.#publishCancel(run.spec.runId);
      }
      await Promise.allSettled([...this.#executing]);
      // Closed first, so closing BullMQ's objects does not wait on a Redis that is gone.
      this.#redis.disconnect();
      this.#bull.disconnect();
      this.#eventsConnection.disconnect();
      await Promise.allSettled([this.#flows.close(), this.#runQueue.close(), this.#shardQueue.close(), this.#shardEvents.close()]);
    })();
    return this.#closing;
  }

  /** The run on the fleet (this attempt's) and shard a shard job id names; null for a job of no such run. */
  #shardOfJob(jobId: string): { runId: string; run: RemoteRun; shard: number } | null {
    for (const [runId, attempt] of this.#attempts) {
      const prefix = `${runJobId(runId, attempt)}-shard-`;
      const run = this.#runs.get(runId);
      if (!run || !jobId.startsWith(prefix)) continue;
      const shard = Number(jobId.slice(prefix.length));
      if (!Number.isInteger(shard) || shard < 0 || shard >= run.shards.length) continue;
      return { runId, run, shard };
    }
    return null;
  }

  /** A shard job failed for good: its run (this attempt's, if still on the fleet) ends FAILED and its other shards stop. */
  async #shardJobFailed(jobId: string, reason: string): Promise<void> {
    const found = this.#shardOfJob(jobId);
    if (!found || found.run.ended) return;
    const { runId, run, shard } = found;
    this.#opts.log.error(`run ${runId}: shard ${shard} failed for good on the queue: ${reason}`);
    await run.shardFailed(shard, reason).catch((err: unknown) => this.#opts.log.error(`run ${runId}: ${errorMessage(err)}`));
    if (run.ended) await this.#publishCancel(runId);
  }

  /**
   * A shard job went back on the queue: its shard reads WAITING again, unless the job is on a
   * worker once more when its state is read (the event was read late) or a worker claimed the
   * shard while it was read. A worker claims only a job it has taken: a claim counted before the
   * read finds the job active, one made during the read changes `attempts`.
   */
  async #shardJobReturned(jobId: string): Promise<void> {
    const found = this.#shardOfJob(jobId);
    if (!found || found.run.ended) return;
    const { runId, run, shard } = found;
    const view = run.shards[shard]!;
    if (view.state !== 'RUNNING') return;
    const claims = view.attempts;
    let state: string;
    try {
      state = await this.#shardQueue.getJobState(jobId);
    } catch (err) {
      this.#opts.log.warn(`run ${runId}: shard ${shard} went back on the queue, but its job could not be read: ${errorMessage(err)}`);
      return;
    }
    if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return;
    if (run.shardReturned(shard, claims))
      this.#opts.log.info(`run ${runId}: shard ${shard} is back on the queue (last taken by ${view.worker})`);
  }

  async #cancel(run: RemoteRun): Promise<void> {
    await this.#publishCancel(run.spec.runId);
    await run.end('CANCELLED');
  }

  async #publishCancel(runId: string): Promise<void> {
    await this.#redis.publish(CANCEL_CHANNEL, runId).catch((err: unknown) => {
      this.#opts.log.warn(`run ${runId}: could not publish its cancel: ${errorMessage(err)}`);
    });
  }

  /** Checks (one check at a time, one more if asked meanwhile) that Redis still holds the jobs of every run on the queue. */
  #checkForgotten(): Promise<void> {
    if (this.#forgotCheck) {
      this.#checkAgain = true;
      return this.#forgotCheck;
    }
    this.#forgotCheck = (async () => {
      do {
        this.#checkAgain = false;
        for (const runId of [...this.#queued]) {
          if (this.#closing || this.#redis.status !== 'ready') return;
          await this.#checkRun(runId).catch((err: unknown) =>
            this.#opts.log.error(`run ${runId}: checking that Redis still holds its jobs: ${errorMessage(err)}`),
          );
        }
      } while (this.#checkAgain);
    })().finally(() => {
      this.#forgotCheck = null;
    });
    return this.#forgotCheck;
  }

  /**
   * A run whose parent job Redis no longer holds (it restarted without its data, or lost it
   * some other way) has lost its waiting shards with it: the shards whose episodes are not all
   * in the run directory go on the queue again, under the same job ids. A shard a worker is
   * still playing may then be played twice; the first commit of each episode wins, so the
   * records are those of one machine either way. When Redis answers but refuses them, the run
   * ends ABORTED (REDIS_LOST), its committed episodes kept, for a retry to finish.
   */
  async #checkRun(runId: string): Promise<void> {
    const run = this.#runs.get(runId);
    const attempt = this.#attempts.get(runId);
    if (!run || run.ended || attempt === undefined) return;
    let held: number;
    try {
      held = await this.#redis.exists(this.#runQueue.toKey(runJobId(runId, attempt)));
    } catch {
      // Unreachable again: the next reconnect checks, and a long outage is #checkRedis's.
      return;
    }
    if (held > 0 || run.ended) return;
    const shards = await run.unfinishedShards();
    if (shards.length === 0) {
      if (run.complete) await run.end('COMPLETED');
      return;
    }
    this.#opts.log.warn(
      `run ${runId}: Redis at ${shownRedisUrl(this.#opts.redisUrl)} no longer holds its jobs (restarted without its data?); shard(s) ${shards.join(', ')} go on the queue again`,
    );
    try {
      await this.#addFlow(run.spec, attempt, shards);
    } catch (err) {
      if (run.ended) return;
      if (!redisRefused(err)) {
        // Not answered (gone again, or reconnecting): the next check tries again.
        this.#opts.log.warn(`run ${runId}: its shards could not be put on the queue again yet: ${errorMessage(err)}`);
        return;
      }
      const why = refusalOf(err);
      this.#opts.log.error(`run ${runId}: Redis refused its shards again: ${why}; ending it ABORTED`);
      await run.end('ABORTED', {
        code: 'REDIS_LOST',
        message: `Redis at ${shownRedisUrl(this.#opts.redisUrl)} lost the run's jobs and refused them again (${why}); its ${run.episodesDone} committed episode(s) are kept, and a retry (evalctl retry ${runId}) plays the rest`,
      });
      await this.#publishCancel(runId);
    }
  }

  async #checkRedis(): Promise<void> {
    if (this.#lostSince === null || Date.now() - this.#lostSince < this.#opts.redisLostMs) return;
    for (const run of [...this.#runs.values()]) {
      if (run.ended) continue;
      this.#opts.log.error(`run ${run.spec.runId}: Redis unreachable for ${this.#opts.redisLostMs} ms; ending it ABORTED`);
      await run.end('ABORTED', {
        code: 'REDIS_LOST',
        message: `Redis at ${shownRedisUrl(this.#opts.redisUrl)} was unreachable for ${this.#opts.redisLostMs} ms while the run was on the scale-out workers; its ${run.episodesDone} committed episode(s) are kept`,
      });
    }
  }
}

/** Redis answered with an error (out of memory, read-only, …), as opposed to not answering at all. */
const redisRefused = (err: unknown): boolean => err instanceof Error && err.name === 'ReplyError';

/** What Redis said: a refused transaction (EXECABORT) names the refusal that aborted it. */
function refusalOf(err: unknown): string {
  const first = (err as { previousErrors?: unknown[] }).previousErrors?.[0];
  return first === undefined ? errorMessage(err) : errorMessage(first);
}
