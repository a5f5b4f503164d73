/**
 * BatchedInferenceServer: coalesces concurrent calls of a batched function into one handler
 * call. Calls are queued by (function, stable hash of config); a queue becomes ready
 * `flushTimeoutMs` after its last arrival, at once when it holds `maxBatchSize` calls or one
 * call from every active caller, and never later than `maxQueueDelayMs` after its first
 * arrival. One handler call runs at a time across all queues. Handlers are batch-invariant,
 * so when a call is served never changes what it returns.
 */
import { HostError, errorMessage } from '../errors.js';
import type { BatchedNodeFunction, NodeCallArgs, NodeOutputs } from './types.js';

export interface BatchedInferenceServerOptions {
  /** A queue flushes at once when it holds this many calls. @default 16 */
  maxBatchSize?: number;
  /** A queue flushes this long after its last arrival. @default 50 */
  flushTimeoutMs?: number;
  /** A queue flushes no later than this after its first arrival, however steady the arrivals. @default 200 */
  maxQueueDelayMs?: number;
  /** A caller counts as active for this long after its last call (unless released). @default 2000 */
  callerTtlMs?: number;
  /** A handler call that has not answered after this long fails its batch and frees the server. @default 30000 */
  handlerTimeoutMs?: number;
}

export interface BatcherStats {
  batches: number;
  rows: number;
  meanBatchSize: number;
}

interface PendingRow {
  args: NodeCallArgs;
  resolve(out: NodeOutputs): void;
  reject(err: unknown): void;
  onAbort?: () => void;
}

interface BatchQueue {
  key: string;
  fn: string;
  handler: BatchedNodeFunction;
  rows: PendingRow[];
  callers: Set<string>;
  ready: boolean;
  /** performance.now() of the latest arrival: the trailing flush is due flushTimeoutMs after it. */
  lastArrival: number;
  trailing?: NodeJS.Timeout;
  deadline?: NodeJS.Timeout;
}

/** JSON with object keys sorted, so equal configs give equal strings whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`).join(',')}}`;
}

function checkOption(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`BatchedInferenceServer option ${name} must be a number ≥ ${min}, got ${String(value)}`);
  }
  return value;
}

export class BatchedInferenceServer {
  readonly maxBatchSize: number;
  readonly flushTimeoutMs: number;
  readonly maxQueueDelayMs: number;
  readonly callerTtlMs: number;
  readonly handlerTimeoutMs: number;

  /** Queues still accepting calls, by key. A queue leaves this map when its handler call starts. */
  private readonly queues = new Map<string, BatchQueue>();
  /** Queues that should run, in the order they became ready. */
  private readonly readyQueue: BatchQueue[] = [];
  private readonly lastSeen = new Map<string, number>();
  private inFlight = false;
  private closed = false;
  private batches = 0;
  private rows = 0;

  constructor(options: BatchedInferenceServerOptions = {}) {
    this.maxBatchSize = checkOption('maxBatchSize', options.maxBatchSize ?? 16, 1);
    this.flushTimeoutMs = checkOption('flushTimeoutMs', options.flushTimeoutMs ?? 50, 0);
    this.maxQueueDelayMs = checkOption('maxQueueDelayMs', options.maxQueueDelayMs ?? 200, 0);
    this.callerTtlMs = checkOption('callerTtlMs', options.callerTtlMs ?? 2000, 0);
    this.handlerTimeoutMs = checkOption('handlerTimeoutMs', options.handlerTimeoutMs ?? 30_000, 1);
  }

  /**
   * Queues one row of `fn` and resolves with that row's outputs once its batch has run. A row
   * still waiting leaves its queue and rejects when its caller goes away: when `row.signal`
   * aborts or, if `onAbandon` is given (then `row.signal` is not read), when the callback it
   * registers is called.
   */
  submit(
    fn: string,
    config: Record<string, unknown>,
    row: NodeCallArgs,
    handler: BatchedNodeFunction,
    onAbandon?: (abandon: (reason: unknown) => void) => void,
  ): Promise<NodeOutputs> {
    if (this.closed) return Promise.reject(new HostError(`batched function "${fn}": the server is closed`));
    const signal = onAbandon ? undefined : row.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);

    const key = `${fn}\u0000${stableStringify(config)}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { key, fn, handler, rows: [], callers: new Set(), ready: false, lastArrival: 0 };
      this.queues.set(key, queue);
      const q = queue;
      queue.deadline = setTimeout(() => this.markReady(q), this.maxQueueDelayMs);
    }
    const callerId = row.ctx.callerId;
    if (callerId !== undefined) {
      this.lastSeen.set(callerId, Date.now());
      queue.callers.add(callerId);
    }

    const q = queue;
    const promise = new Promise<NodeOutputs>((resolve, reject) => {
      const pending: PendingRow = { args: row, resolve, reject };
      const leave = (reason: unknown): void => {
        const i = q.rows.indexOf(pending);
        // Only a row still waiting can leave; once its batch runs, it gets its answer.
        if (i >= 0 && this.queues.get(q.key) === q) {
          q.rows.splice(i, 1);
          reject(reason);
        }
      };
      q.rows.push(pending);
      if (onAbandon) {
        onAbandon(leave);
      } else if (signal) {
        pending.onAbort = () => leave(signal.reason);
        signal.addEventListener('abort', pending.onAbort, { once: true });
      }
    });

    if (q.rows.length >= this.maxBatchSize || this.everyActiveCallerWaits(q)) {
      this.markReady(q);
    } else if (!q.ready) {
      // One timer per queue, pushed back when it fires early, rather than a new timer per arrival.
      q.lastArrival = performance.now();
      q.trailing ??= setTimeout(() => this.trailingDue(q), this.flushTimeoutMs);
    }
    return promise;
  }

  private trailingDue(q: BatchQueue): void {
    q.trailing = undefined;
    if (q.ready || this.queues.get(q.key) !== q) return;
    const left = q.lastArrival + this.flushTimeoutMs - performance.now();
    if (left >= 1) q.trailing = setTimeout(() => this.trailingDue(q), Math.ceil(left));
    else this.markReady(q);
  }

  /** The caller will make no more calls (its worker finished): stop waiting for it. */
  releaseCaller(callerId: string): void {
    this.lastSeen.delete(callerId);
    for (const q of this.queues.values()) {
      if (!q.ready && q.rows.length > 0 && this.everyActiveCallerWaits(q)) this.markReady(q);
    }
  }

  stats(): BatcherStats {
    return { batches: this.batches, rows: this.rows, meanBatchSize: this.batches === 0 ? 0 : this.rows / this.batches };
  }

  /** Fails every call still waiting and refuses new ones. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const q of this.queues.values()) {
      this.clearTimers(q);
      for (const r of q.rows) r.reject(new HostError(`batched function "${q.fn}": the server closed before the batch ran`));
      q.rows.length = 0;
    }
    this.queues.clear();
    this.readyQueue.length = 0;
  }

  /** Whether the queue holds a call from every caller seen within callerTtlMs (at least one); forgets callers past it. */
  private everyActiveCallerWaits(q: BatchQueue): boolean {
    if (q.callers.size === 0) return false;
    const now = Date.now();
    let active = 0;
    let waiting = true;
    for (const [id, seen] of this.lastSeen) {
      if (now - seen > this.callerTtlMs) {
        this.lastSeen.delete(id);
        continue;
      }
      active++;
      if (!q.callers.has(id)) waiting = false;
    }
    return active > 0 && waiting;
  }

  private clearTimers(q: BatchQueue): void {
    clearTimeout(q.trailing);
    clearTimeout(q.deadline);
    q.trailing = undefined;
    q.deadline = undefined;
  }

  private markReady(q: BatchQueue): void {
    if (q.ready || this.queues.get(q.key) !== q) return;
    q.ready = true;
    clearTimeout(q.trailing);
    clearTimeout(q.deadline);
    this.readyQueue.push(q);
    this.pump();
  }

  private pump(): void {
    while (!this.inFlight && !this.closed) {
      const q = this.readyQueue.shift();
      if (!q) return;
      // A ready queue keeps accepting calls while it waits for the lock; it closes here.
      this.queues.delete(q.key);
      this.clearTimers(q);
      const rows = q.rows.splice(0, this.maxBatchSize);
      if (q.rows.length > 0) this.requeue(q);
      if (rows.length === 0) continue;
      this.inFlight = true;
      void this.runBatch(q, rows).finally(() => {
        this.inFlight = false;
        this.pump();
      });
    }
  }

  /** Rows beyond maxBatchSize stay queued under the same key, ready at once: they have waited long enough. */
  private requeue(q: BatchQueue): void {
    const rest: BatchQueue = { key: q.key, fn: q.fn, handler: q.handler, rows: q.rows.splice(0), callers: new Set(), ready: true, lastArrival: 0 };
    for (const r of rest.rows) if (r.args.ctx.callerId !== undefined) rest.callers.add(r.args.ctx.callerId);
    this.queues.set(q.key, rest);
    this.readyQueue.unshift(rest);
  }

  private async runBatch(q: BatchQueue, rows: PendingRow[]): Promise<void> {
    for (const r of rows) if (r.onAbort) r.args.signal?.removeEventListener('abort', r.onAbort);
    this.batches += 1;
    this.rows += rows.length;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new HostError(`batched function "${q.fn}" did not answer a batch of ${rows.length} within ${this.handlerTimeoutMs} ms`)),
          this.handlerTimeoutMs,
        );
      });
      const outputs = await Promise.race([Promise.resolve().then(() => q.handler(rows.map((r) => r.args))), timeout]);
      if (!Array.isArray(outputs) || outputs.length !== rows.length) {
        const got = Array.isArray(outputs) ? `${outputs.length} rows` : typeof outputs;
        throw new HostError(`batched function "${q.fn}" returned ${got} for a batch of ${rows.length} rows`);
      }
      rows.forEach((r, i) => r.resolve(outputs[i] as NodeOutputs));
    } catch (err) {
      const failure = err instanceof HostError ? err : new HostError(`batched function "${q.fn}" failed: ${errorMessage(err)}`, { cause: err });
      for (const r of rows) r.reject(failure);
    } finally {
      clearTimeout(timer);
    }
  }
}
