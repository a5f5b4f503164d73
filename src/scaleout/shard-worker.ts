/**
 * A scale-out worker (`evalctl worker --redis URL --server URL`): takes shard jobs from BullMQ
 * (up to `slots` at once, highest run priority first), admits each by this machine's own
 * resources (the scheduler's estimate and admission; a shard that does not fit goes back to
 * the queue for another worker), and plays it in an eval process with its own hosts under the
 * shard's run indices, skipping those the head has committed already. Each finished episode's
 * folder is committed to the head at once; the head's ledger, not this process, decides what
 * counts. A cancel published on the cancel channel stops the run's eval processes here
 * (SIGTERM, SIGKILL after `cancelGraceMs`). While a shard runs BullMQ renews its lock; a worker
 * that dies stops renewing it, and after `lockDurationMs` another worker's stalled check puts
 * the shard back on the queue. Each slot keeps a spare eval process started and waiting (see
 * `spares`), so a shard starts without waiting for Node to load.
 *
 * The head's HTTP is checked at start (an authenticated heartbeat). A claim or commit the head
 * does not answer, or answers with a 5xx, is asked again with backoff for `headRetryMs` (at least once); then the
 * shard goes back on the queue through BullMQ's attempts (shard-flow.ts) and this worker takes no
 * new shard until a heartbeat gets through again. A token the head refuses puts the shard back
 * untouched and ends the worker (`refused`).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { availableParallelism, hostname } from 'node:os';
import { join, relative } from 'node:path';
import { DelayedError, Worker, type Job as BullJob } from 'bullmq';
import type { Redis } from 'ioredis';
import { CodedError, errorMessage } from '../errors.js';
import { EPISODE_FILES } from '../eval-process/episode-writer.js';
import { isSpareWaiting, type SpareGoMessage } from '../eval-process/messages.js';
import { HEARTBEAT_ENV, heartbeatMsFor } from '../eval-process/heartbeat.js';
import { EVAL_PROCESS_MAIN } from '../paths.js';
import { heldModelKeys } from '../core/model-keys.js';
import { planAdmission } from '../scheduler/admission/admission.js';
import { estimateRun, nodesetCosts } from '../scheduler/admission/estimate.js';
import { ResourceSampler, type ResourceSource } from '../scheduler/admission/resource-sampler.js';
import { groupAlive, signalGroup, spawnEvalProcess, type EvalChild } from '../scheduler/job/spawn-eval.js';
import { inspectRunGraph } from '../scheduler/run-graph.js';
import type { ResourceEstimate, SchedulerLogger } from '../scheduler/types.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { shardPlays } from '../spec/shards.js';
import { episodeDir, FILES, readSummary, writeSpec } from '../store/run-dir.js';
import type { RunSpec } from '../store/types.js';
import { HeadClient, HeadRequestError, isTransientHeadError } from './head-client.js';
import { CANCEL_CHANNEL, SCALEOUT_ROUTES, type ClaimAnswer, type CommitAnswer, type WorkerHeartbeat } from './protocol.js';
import { redisClient, RedisUnavailableError, shownRedisUrl } from './redis-connection.js';
import { SHARD_QUEUE, type ShardJobData } from './shard-flow.js';

export interface ShardWorkerOptions {
  redisUrl: string;
  /** The head's base URL (http://host:port). */
  serverUrl: string;
  /** The server's token. @default process.env.EVAL_API_TOKEN */
  token?: string | undefined;
  /** Shards played at once. @default 1 */
  slots?: number;
  /** Where the shards' local run dirs go (removed once a shard is committed). */
  workDir: string;
  /** This worker's name in `workers` and `run.shards`. @default <hostname>-<pid> */
  name?: string;
  /** Cores admission shares among this worker's shards. @default os.availableParallelism() */
  cores?: number;
  /** BullMQ lock of a shard job: a dead worker's shard is taken again this long after it stopped renewing. @default 30000 */
  lockDurationMs?: number;
  /** How often this worker looks for stalled shards (of dead workers). @default 30000 */
  stalledIntervalMs?: number;
  /** Between SIGTERM and SIGKILL when a shard's eval process is stopped. @default 1000 */
  cancelGraceMs?: number;
  /** How often the worker tells the head about itself. @default 2000 */
  heartbeatMs?: number;
  /**
   * A shard whose eval process sends no heartbeat for this long (stopped, or a call holding its
   * main thread) is killed (SIGTERM, SIGKILL after `cancelGraceMs`) and goes back on the queue
   * like a shard whose process died; its committed episodes stay committed (0: never). @default 60000
   */
  evalHungMs?: number;
  /** A shard that does not fit here goes back to the queue for this long. @default 1000 */
  refitDelayMs?: number;
  /**
   * How long a claim or commit the head does not answer (or answers with a 5xx) is asked again,
   * with backoff (at least once), before the shard goes back on the queue for any worker. @default 10000
   */
  headRetryMs?: number;
  /** One request to the head is given up after this long without an answer. @default 60000 */
  headTimeoutMs?: number;
  /**
   * Eval processes kept started and waiting for a shard (`--await-go`): a shard then skips the
   * eval process's own start-up (about a third of a second, more when several start at once).
   * Each costs an idle Node process's memory (about 60 MB); 0 starts one per shard. @default slots
   */
  spares?: number;
  sampler?: ResourceSource;
  evalProcessMain?: string;
  log?: SchedulerLogger;
}

/** An eval process started in its own run dir and waiting for a spec and `go`. */
interface Spare {
  dir: string;
  child: EvalChild;
  gone: boolean;
  /** Sends its IPC messages to `fn` from now on (a shard's episode notices). */
  listen(fn: (message: unknown) => void): void;
}

interface ActiveShard {
  runId: string;
  shard: number;
  child: EvalChild | null;
  estimate: ResourceEstimate;
  /** Why it is being stopped (cancel, run over), or null. */
  stopping: string | null;
  /** Set when its eval process was killed for its silence: what happened, in words. */
  hung: string | null;
  killTimer: NodeJS.Timeout | null;
}

const quietLog: SchedulerLogger = { info: () => {}, warn: () => {}, error: () => {} };

export class ShardWorker {
  readonly name: string;
  readonly #o: Required<Omit<ShardWorkerOptions, 'token' | 'name' | 'sampler' | 'cores' | 'spares' | 'headTimeoutMs'>> & {
    spares: number;
    token: string | undefined;
    cores: number | undefined;
  };
  readonly #head: HeadClient;
  readonly #sampler: ResourceSource;
  readonly #ownsSampler: boolean;
  readonly #active = new Set<ActiveShard>();
  /** Shard jobs being played, until their folder is removed: close() waits for them (bounded). */
  readonly #playing = new Set<Promise<unknown>>();
  readonly #estimates = new Map<string, Promise<ResourceEstimate>>();
  /** Spares starting or waiting, oldest first. */
  #spares: Promise<Spare | null>[] = [];
  #bullConnection: Redis | null = null;
  #subscriber: Redis | null = null;
  #worker: Worker<ShardJobData> | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #closing: Promise<void> | null = null;
  /** Taking no new shard until the head answers a heartbeat again. */
  #paused = false;
  #heartbeatFailing = false;
  #onRefused: (err: HeadRequestError) => void = () => {};
  /**
   * Resolves when the head refuses this worker's token while it runs (the token was changed on
   * the head): the shard in hand went back on the queue untouched; the caller should close().
   */
  readonly refused: Promise<HeadRequestError> = new Promise((resolve) => {
    this.#onRefused = resolve;
  });

  constructor(opts: ShardWorkerOptions) {
    this.name = opts.name ?? `${hostname()}-${process.pid}`;
    this.#o = {
      slots: 1,
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      cancelGraceMs: 1000,
      heartbeatMs: 2000,
      evalHungMs: 60_000,
      refitDelayMs: 1000,
      headRetryMs: 10_000,
      evalProcessMain: EVAL_PROCESS_MAIN,
      log: quietLog,
      ...opts,
      token: opts.token ?? (process.env.EVAL_API_TOKEN || undefined),
      cores: opts.cores,
      spares: opts.spares ?? opts.slots ?? 1,
    };
    this.#head = new HeadClient(opts.serverUrl, this.#o.token, {
      ...(opts.headTimeoutMs !== undefined ? { requestTimeoutMs: opts.headTimeoutMs } : {}),
    });
    this.#sampler = opts.sampler ?? new ResourceSampler();
    this.#ownsSampler = opts.sampler === undefined;
  }

  /**
   * Checks that the head takes this worker's token (a heartbeat; a HeadRequestError when it does
   * not: `refused` for the token, `transient` when unreachable), connects to Redis
   * (REDIS_UNAVAILABLE when it cannot), starts the spares, listens for cancels, starts taking shards.
   */
  async start(): Promise<void> {
    // A worker the head would refuse takes shards only to lose them: refuse to start instead.
    await this.#head.post(SCALEOUT_ROUTES.heartbeat, await this.#heartbeatBody());
    const bull = redisClient(this.#o.redisUrl, { failFast: false });
    const sub = redisClient(this.#o.redisUrl, { failFast: false });
    bull.on('error', () => {});
    sub.on('error', () => {});
    this.#bullConnection = bull;
    this.#subscriber = sub;
    try {
      await bull.connect();
      await sub.connect();
      await sub.subscribe(CANCEL_CHANNEL);
    } catch (err) {
      bull.disconnect();
      sub.disconnect();
      throw new RedisUnavailableError(this.#o.redisUrl, err);
    }
    sub.on('message', (_channel: string, runId: string) => this.#stopRun(runId, 'the run was cancelled or ended'));
    this.#refillSpares();
    // Ready means a shard taken now starts at once.
    await Promise.all(this.#spares);
    this.#worker = new Worker<ShardJobData>(SHARD_QUEUE, (job, token) => this.#play(job, token), {
      connection: bull,
      concurrency: this.#o.slots,
      lockDuration: this.#o.lockDurationMs,
      stalledInterval: this.#o.stalledIntervalMs,
      // A shard is only ever taken again after a dead worker; its committed episodes are never replayed.
      maxStalledCount: 1000,
      // Priorities decide; no job waits on a worker that is between two polls.
      drainDelay: 1,
    });
    this.#worker.on('error', (err) => this.#o.log.warn(`worker: ${errorMessage(err)}`));
    this.#heartbeat = setInterval(() => void this.#sendHeartbeat(), this.#o.heartbeatMs);
    void this.#sendHeartbeat();
    this.#o.log.info(
      `worker ${this.name}: taking shards from ${shownRedisUrl(this.#o.redisUrl)} for ${this.#o.serverUrl} (${this.#o.slots} slot(s))`,
    );
  }

  /** Stops taking shards, stops the eval processes of those in hand (they go back to the queue), closes Redis. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#heartbeat) clearInterval(this.#heartbeat);
      for (const a of this.#active) this.#stop(a, 'the worker is stopping');
      // Closed at once (force): the shards in hand are not completed on the queue but left to go back to it.
      const closed = this.#worker?.close(true).catch(() => {});
      const spares = Promise.all(this.#spares.splice(0).map((p) => p.then((s) => s && this.#discardSpare(s))));
      // The stopped shards' eval processes exit within the grace, then their folders go; a head that hangs on a commit is not waited for.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.#playing]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, this.#o.cancelGraceMs + 5000);
        }),
      ]);
      clearTimeout(timer);
      await Promise.all([closed, spares]);
      this.#subscriber?.disconnect();
      this.#bullConnection?.disconnect();
      if (this.#ownsSampler) this.#sampler.close?.();
    })();
    return this.#closing;
  }

  /** The pids of the eval processes running now. */
  get evalPids(): number[] {
    return [...this.#active].flatMap((a) => (a.child ? [a.child.pid] : []));
  }

  /** Plays a shard job; what the head failed to take sends the shard back on the queue (see the file's doc). */
  #play(job: BullJob<ShardJobData>, token: string | undefined): Promise<string> {
    const p = this.#playOrHandBack(job, token);
    this.#playing.add(p);
    const forget = () => this.#playing.delete(p);
    p.then(forget, forget);
    return p;
  }

  async #playOrHandBack(job: BullJob<ShardJobData>, token: string | undefined): Promise<string> {
    const { runId, shard } = job.data;
    try {
      return await this.#playJob(job, token);
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      if (err instanceof HeadRequestError && err.refused) {
        // Not the shard's fault: it goes back untouched (no attempt spent) for a worker the head takes.
        this.#o.log.error(`run ${runId} shard ${shard}: the head refused this worker (${err.message}); the shard goes back on the queue`);
        await job.moveToDelayed(Date.now() + this.#o.refitDelayMs, token);
        this.#onRefused(err);
        throw new DelayedError();
      }
      const attempts = `attempt ${job.attemptsMade + 1} of ${job.opts.attempts ?? 1}`;
      if (isTransientHeadError(err)) {
        this.#o.log.warn(`run ${runId} shard ${shard}: ${errorMessage(err)}; the shard goes back on the queue (${attempts})`);
        this.#pauseUntilHeadAnswers();
      } else this.#o.log.warn(`run ${runId} shard ${shard}: ${errorMessage(err)} (${attempts})`);
      throw err;
    }
  }

  /**
   * A request to the head, asked again with backoff (0.25 s doubling to 2 s) while it fails for a
   * reason that may pass (see HeadRequestError.transient), for up to `headRetryMs`, and at least
   * once however long the failed request took (one dropped connection should not cost a shard
   * an attempt); each failure is logged.
   */
  async #ask<T>(what: string, request: () => Promise<T>): Promise<T> {
    const until = Date.now() + this.#o.headRetryMs;
    for (let delay = 250, again = false; ; delay = Math.min(delay * 2, 2000), again = true) {
      try {
        return await request();
      } catch (err) {
        if (!isTransientHeadError(err) || (again && Date.now() + delay > until) || this.#closing) throw err;
        this.#o.log.warn(`${what}: ${errorMessage(err)}; asking again in ${delay} ms`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Takes no new shard until a heartbeat gets through: a worker cut off from the head would only use up shards' attempts. */
  #pauseUntilHeadAnswers(): void {
    if (this.#paused || !this.#worker || this.#closing) return;
    this.#paused = true;
    this.#o.log.warn(`worker ${this.name}: takes no new shard until the head at ${this.#o.serverUrl} answers again`);
    this.#worker.pause(true).catch(() => {});
  }

  /** The run's spec and what the head holds of the shard now, without claiming it. */
  #probe(runId: string, shard: number, what: string): Promise<ClaimAnswer> {
    return this.#ask(`run ${runId} shard ${shard}: ${what}`, () =>
      this.#head.post<ClaimAnswer>(SCALEOUT_ROUTES.claim, { runId, shard, worker: this.name, probe: true }),
    );
  }

  async #playJob(job: BullJob<ShardJobData>, token: string | undefined): Promise<string> {
    const { runId, shard } = job.data;
    const claim = await this.#probe(runId, shard, 'claim');
    if (claim.action === 'skip') return `skipped: ${claim.reason}`;
    const { spec } = claim;
    const estimate = await this.#estimate(spec);
    if (!(await this.#fits(runId, spec, estimate))) {
      // Another worker (or this one, later) takes it: never hold a shard that cannot start here.
      await job.moveToDelayed(Date.now() + this.#o.refitDelayMs, token);
      throw new DelayedError();
    }
    const active: ActiveShard = { runId, shard, child: null, estimate, stopping: null, hung: null, killTimer: null };
    this.#active.add(active);
    try {
      return await this.#playClaimed(active, spec, claim.committed);
    } finally {
      if (active.killTimer) clearTimeout(active.killTimer);
      this.#active.delete(active);
    }
  }

  async #playClaimed(active: ActiveShard, spec: RunSpec, committed: number[]): Promise<string> {
    const { runId, shard } = active;
    const taken = await this.#ask(`run ${runId} shard ${shard}: claim`, () =>
      this.#head.post<ClaimAnswer>(SCALEOUT_ROUTES.claim, { runId, shard, worker: this.name }),
    );
    if (taken.action === 'skip') return `skipped: ${taken.reason}`;
    // The claim that counts: what was committed until now is skipped, the rest played under the same seeds.
    const done = new Set([...taken.committed, ...committed]);
    const indices = shardPlays(spec, shard).filter((i) => !done.has(i));
    if (indices.length === 0) {
      await this.#shardEnd(runId, shard, 'COMPLETED', null);
      return 'nothing left';
    }
    // A shard stopped while it was being claimed leaves the spare for the next one.
    if (active.stopping) return `stopped before it started: ${active.stopping}`;
    const slot = await this.#takeSpare();
    if (!slot) throw new CodedError('INTERNAL_SERVER_ERROR', `run ${runId} shard ${shard}: the eval process did not start`);
    const runDir = slot.dir;
    try {
      await writeSpec(runDir, { ...spec, viaSubprocess: true, episodeIndices: indices });
    } catch (err) {
      await this.#discardSpare(slot);
      throw err;
    }
    let commits: Promise<void> = Promise.resolve();
    let commitError: unknown = null;
    /** The shard's indices the head has (committed here, or before). */
    const held = new Set(done);
    const commit = (index: number) => {
      commits = commits.then(async () => {
        // A stopped eval process ends its episodes in flight CANCELLED: those are not results.
        if (commitError !== null || active.stopping !== null || active.hung !== null || held.has(index)) return;
        try {
          await this.#ask(`run ${runId} shard ${shard}: commit of episode ${index}`, () => this.#commit(runId, shard, runDir, index));
          held.add(index);
        } catch (err) {
          commitError = err;
          // The head will not take this run's episodes any more (ended), or cannot: stop playing.
          this.#stop(active, `the head did not take episode ${index}: ${errorMessage(err)}`);
        }
      });
    };
    const child = slot.child;
    let heardAtMs = performance.now();
    slot.listen((m) => {
      heardAtMs = performance.now();
      const msg = m as { type?: string; index?: number };
      if (msg?.type === 'episodeDone' && typeof msg.index === 'number') commit(msg.index);
      // The next shard's spare starts once this one's start-up no longer competes for the cores.
      else if (msg?.type === 'running') this.#refillSpares();
    });
    void child.exited.then(() => this.#refillSpares());
    active.child = child;
    if (active.stopping) this.#stop(active, active.stopping);
    else if (!child.send({ type: 'go', modelKeys: heldModelKeys() } satisfies SpareGoMessage))
      this.#o.log.warn(`run ${runId} shard ${shard}: the eval process (pid ${child.pid}) is gone`);
    this.#o.log.info(`run ${runId} shard ${shard}: playing ${indices.length} episode(s) in ${runDir} (pid ${child.pid})`);
    const limit = this.#o.evalHungMs;
    const watch =
      limit > 0
        ? setInterval(
            () => {
              const silentMs = performance.now() - heardAtMs;
              if (silentMs <= limit || active.hung !== null || active.stopping !== null) return;
              active.hung = `the eval process (pid ${child.pid}) sent no heartbeat for ${(silentMs / 1000).toFixed(1)} s (limit ${limit / 1000} s): it was stopped or a call held its main thread; killed`;
              this.#o.log.warn(`run ${runId} shard ${shard}: ${active.hung}; the shard goes back on the queue`);
              this.#kill(active, child.pid);
            },
            Math.max(25, Math.min(1000, Math.floor(limit / 4))),
          )
        : undefined;
    try {
      const exit = await child.exited.finally(() => clearInterval(watch));
      // Anything of its group left behind goes too.
      if (groupAlive(child.pid)) signalGroup(child.pid, 'SIGKILL');
      await commits;
      if (commitError !== null) {
        // A run that has ended takes nothing more: the shard is done with. Anything else goes back on the queue (#play).
        if (commitError instanceof HeadRequestError && commitError.status === 409) return `stopped: ${active.stopping}`;
        throw commitError;
      }
      if (active.stopping) return `stopped: ${active.stopping}`;
      const summary = await readSummary(runDir).catch(() => null);
      const status = summary?.status ?? 'ABORTED';
      if (status === 'COMPLETED') {
        // An episode whose notice was lost is still on disk here: commit it now rather than play it again elsewhere.
        for (const index of indices)
          if (!held.has(index) && existsSync(join(episodeDir(runDir, index), EPISODE_FILES.record))) commit(index);
        await commits;
        if (commitError !== null) {
          throw commitError;
        }
        // What the head holds now, not what an earlier answer said: across a head restart the new head may lack an episode the old one had listed.
        const now = await this.#probe(runId, shard, 'check');
        if (now.action === 'skip') return `stopped: ${now.reason}`;
        held.clear();
        for (const i of now.committed) held.add(i);
        for (const index of indices)
          if (!held.has(index) && existsSync(join(episodeDir(runDir, index), EPISODE_FILES.record))) commit(index);
        await commits;
        if (commitError !== null) throw commitError;
        const lacking = shardPlays(spec, shard).filter((i) => !held.has(i));
        if (lacking.length === 0) {
          await this.#shardEnd(runId, shard, 'COMPLETED', null);
          return 'completed';
        }
        // Never COMPLETED with episodes missing (the head would wait for them for ever): episodes neither the head nor this worker holds go back on the queue with the shard, and whoever takes it plays them.
        const error = { code: 'ABORTED', message: `the head lacks episode(s) ${lacking.join(', ')} of the shard; it is played again` };
        await this.#shardEnd(runId, shard, 'ABORTED', error);
        throw new CodedError('ABORTED', `shard ${shard} of run ${runId} ended ABORTED: ${error.message}`);
      }
      if (active.hung !== null) {
        await this.#shardEnd(runId, shard, 'ABORTED', { code: 'HUNG', message: active.hung });
        throw new CodedError('HUNG', `shard ${shard} of run ${runId}: ${active.hung}`);
      }
      const error = summary?.error ?? {
        code: 'ABORTED',
        message: `the eval process ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`} before finishing`,
      };
      await this.#shardEnd(runId, shard, status, error);
      throw new CodedError('ABORTED', `shard ${shard} of run ${runId} ended ${status}: ${error.message}`);
    } finally {
      // Committed or handed back, the shard's folder is of no more use here; a failed one's stderr goes to the log first.
      await commits;
      await this.#removeShardDir(runId, shard, runDir, active.stopping === null);
    }
  }

  /** Removes a played shard's folder; with `failed`, the tail of its eval process's stderr.log goes to the log first unless it completed. */
  async #removeShardDir(runId: string, shard: number, runDir: string, failed: boolean): Promise<void> {
    const summary = failed ? await readSummary(runDir).catch(() => null) : null;
    if (failed && summary?.status !== 'COMPLETED') {
      const stderr = await readFile(join(runDir, FILES.stderr), 'utf8').catch(() => '');
      if (stderr.trim() !== '')
        this.#o.log.warn(`run ${runId} shard ${shard}: its eval process's stderr ended with:\n${stderr.slice(-2000).trimEnd()}`);
    }
    await rm(runDir, { recursive: true, force: true }).catch((err: unknown) =>
      this.#o.log.warn(`run ${runId} shard ${shard}: could not remove ${runDir}: ${errorMessage(err)}`),
    );
  }

  /** Starts spares until `spares` are starting or waiting (none while closing). */
  #refillSpares(): void {
    while (this.#closing === null && this.#spares.length < this.#o.spares) this.#spares.push(this.#startSpare());
  }

  /** The oldest live spare, or a new eval process when none is left; null when none would start. */
  async #takeSpare(): Promise<Spare | null> {
    for (let next = this.#spares.shift(); next; next = this.#spares.shift()) {
      const spare = await next;
      if (spare && !spare.gone) return spare;
      if (spare) await this.#discardSpare(spare);
    }
    return this.#startSpare();
  }

  /** An eval process in a fresh run dir, loaded and waiting for `go`; null when it exits first or cannot start. */
  async #startSpare(): Promise<Spare | null> {
    const dir = join(this.#o.workDir, `slot-${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(dir, { recursive: true });
      let waiting: () => void = () => {};
      const ready = new Promise<void>((resolve) => {
        waiting = resolve;
      });
      // Until a shard takes the spare, the only message that matters is that it waits.
      let onMessage = (m: unknown) => {
        if (isSpareWaiting(m)) waiting();
      };
      const child = await spawnEvalProcess({
        evalProcessMain: this.#o.evalProcessMain,
        runDir: dir,
        backendUrl: this.#o.serverUrl,
        env: { EVAL_EPISODE_IPC: '1', ...(this.#o.evalHungMs > 0 ? { [HEARTBEAT_ENV]: String(heartbeatMsFor(this.#o.evalHungMs)) } : {}) },
        awaitGo: true,
        onMessage: (m) => onMessage(m),
      });
      const spare: Spare = {
        dir,
        child,
        gone: false,
        listen: (fn) => {
          onMessage = fn;
        },
      };
      const exited = child.exited.then(() => {
        spare.gone = true;
      });
      await Promise.race([ready, exited]);
      if (spare.gone) throw new Error(`it exited while starting (see ${join(dir, 'stderr.log')})`);
      return spare;
    } catch (err) {
      this.#o.log.warn(`worker ${this.name}: a spare eval process did not start: ${errorMessage(err)}`);
      return null;
    }
  }

  /** Stops a spare that played nothing (SIGTERM, SIGKILL after the grace) and removes its dir. */
  async #discardSpare(spare: Spare): Promise<void> {
    if (!spare.gone) {
      signalGroup(spare.child.pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(spare.child.pid, 'SIGKILL'), this.#o.cancelGraceMs);
      await spare.child.exited;
      clearTimeout(timer);
    }
    await rm(spare.dir, { recursive: true, force: true });
  }

  async #commit(runId: string, shard: number, runDir: string, index: number): Promise<void> {
    const dir = episodeDir(runDir, index);
    const files = await filesUnder(dir);
    await this.#head.post<CommitAnswer>(SCALEOUT_ROUTES.commit, { runId, shard, worker: this.name, index, files });
  }

  async #shardEnd(runId: string, shard: number, status: string, error: { code: string; message: string } | null): Promise<void> {
    await this.#head
      .post(SCALEOUT_ROUTES.shardEnd, { runId, shard, worker: this.name, status, error })
      .catch((err: unknown) => this.#o.log.warn(`run ${runId} shard ${shard}: telling the head it ended: ${errorMessage(err)}`));
  }

  /** A run's estimate, kept for its later shards: reading its graph and manifests again costs tens of ms per shard. */
  async #estimate(spec: RunSpec): Promise<ResourceEstimate> {
    const key = JSON.stringify([spec.runId, spec.graphName, spec.graph, spec.activeWorkspaceDir, effectiveWorkerCount(spec)]);
    let estimate = this.#estimates.get(key);
    if (!estimate) {
      estimate = this.#estimateNow(spec);
      this.#estimates.set(key, estimate);
      // Dropped when it fails (the next shard tries again), and only the last few runs' are kept.
      estimate.catch(() => this.#estimates.delete(key));
      if (this.#estimates.size > 16) this.#estimates.delete(this.#estimates.keys().next().value!);
    }
    return estimate;
  }

  async #estimateNow(spec: RunSpec): Promise<ResourceEstimate> {
    const info = await inspectRunGraph({
      graphName: spec.graphName,
      frozen: spec.graph,
      ...(spec.activeWorkspaceDir ? { workspaceDir: spec.activeWorkspaceDir } : {}),
    });
    info.registry.close();
    return estimateRun({ workerCount: effectiveWorkerCount(spec), nodesets: nodesetCosts(info.nodesets), calibratedPeakMb: null });
  }

  /** The scheduler's admission over this machine: the shard against the free resources left by the shards already here. */
  async #fits(runId: string, spec: RunSpec, estimate: ResourceEstimate): Promise<boolean> {
    const sample = await this.#sampler.sample().catch(() => ({ ramTotalMb: null, ramFreeMb: null, vramTotalMb: null, vramFreeMb: null }));
    const plan = planAdmission({
      queue: [{ runId, priority: spec.priority, estimate, exclusiveGpu: spec.exclusiveGpu, skippedSinceMs: null }],
      running: [...this.#active].map((a) => ({
        runId: `${a.runId}#${a.shard}`,
        reservation: a.estimate,
        exclusiveGpu: false,
        rssMb: null,
      })),
      capacity: { ...sample, ...(this.#o.cores !== undefined ? { cores: this.#o.cores } : {}) },
      lockHolder: null,
      now: Date.now(),
      starvationMs: Number.MAX_SAFE_INTEGER,
    });
    // Alone on the machine it always starts: a shard too big for every worker would otherwise never run.
    return plan.admit.length > 0 || this.#active.size === 0;
  }

  #stopRun(runId: string, why: string): void {
    for (const a of this.#active) if (a.runId === runId) this.#stop(a, why);
  }

  /** SIGTERM to the shard's eval process group, SIGKILL after the grace. */
  #stop(a: ActiveShard, why: string): void {
    a.stopping ??= why;
    const pid = a.child?.pid;
    if (pid === undefined || a.killTimer) return;
    this.#o.log.info(`run ${a.runId} shard ${a.shard}: stopping (${why})`);
    this.#kill(a, pid);
  }

  /** SIGTERM to the group, SIGKILL after the grace (a stopped process only dies of that). */
  #kill(a: ActiveShard, pid: number): void {
    if (a.killTimer) return;
    signalGroup(pid, 'SIGTERM');
    a.killTimer = setTimeout(() => {
      if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
    }, this.#o.cancelGraceMs);
  }

  async #sendHeartbeat(): Promise<void> {
    try {
      await this.#head.post(SCALEOUT_ROUTES.heartbeat, await this.#heartbeatBody());
    } catch (err) {
      // Said once per outage, not every beat.
      if (!this.#heartbeatFailing) this.#o.log.warn(`heartbeat: ${errorMessage(err)}`);
      this.#heartbeatFailing = true;
      if (err instanceof HeadRequestError && err.refused) this.#onRefused(err);
      return;
    }
    if (this.#heartbeatFailing) this.#o.log.info(`worker ${this.name}: the head answers heartbeats again`);
    this.#heartbeatFailing = false;
    if (this.#paused && this.#worker && !this.#closing) {
      this.#paused = false;
      this.#o.log.info(`worker ${this.name}: taking shards again`);
      this.#worker.resume().catch((err: unknown) => this.#o.log.warn(`worker: ${errorMessage(err)}`));
    }
  }

  async #heartbeatBody(): Promise<WorkerHeartbeat> {
    const sample = await this.#sampler.sample().catch(() => null);
    return {
      worker: this.name,
      machine: hostname(),
      slots: this.#o.slots,
      ramFreeMb: sample?.ramFreeMb ?? null,
      vramFreeMb: sample?.vramFreeMb ?? null,
      cores: this.#o.cores ?? availableParallelism(),
      shards: [...this.#active].map((a) => ({ runId: a.runId, shard: a.shard })),
    };
  }
}

/** Every file under `dir`, relative paths, base64 (an episode folder: episode.json, log.jsonl, events.jsonl, assets/…). */
async function filesUnder(dir: string): Promise<{ path: string; data: string }[]> {
  const out: { path: string; data: string }[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && !e.name.endsWith('.tmp')) out.push({ path: relative(dir, p), data: (await readFile(p)).toString('base64') });
    }
  };
  if (existsSync(dir)) await walk(dir);
  if (!out.some((f) => f.path === EPISODE_FILES.record))
    throw new CodedError('INTERNAL_SERVER_ERROR', `${dir} has no ${EPISODE_FILES.record}`);
  return out;
}
