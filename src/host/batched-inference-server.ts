/**
 * BatchedInferenceServer: coalesces concurrent calls of a batched function into one handler
 * call, the way dynamic batchers of inference servers do. Calls are queued by (function,
 * stable hash of config); a queue becomes ready at once when it holds `maxBatchSize` calls or
 * when every active caller has a call waiting (in any queue: nobody else is coming), and
 * otherwise `maxQueueDelayMs` after its first arrival at the latest. One handler call runs at a
 * time across all queues; while it runs, new calls pile up and go as the next batch as soon
 * as it ends. A call never waits for a caller that may not come longer than the short queue
 * delay. Handlers are batch-invariant, so when a call is served never changes what it returns.
 */
import { HostError, errorMessage } from '../errors.js';
import type { BatchedNodeFunction, NodeCallArgs, NodeOutputs } from '../core/types.js';

export interface BatchedInferenceServerOptions {
  /** A queue flushes at once when it holds this many calls. @default 16 */
  maxBatchSize?: number;
  /**
   * The longest a call waits for batch mates while the model is free: a queue runs no later
   * than this after its first arrival (sooner when full or when every active caller waits).
   * `0`: no waiting at all: a queue runs once the calls of the current event-loop turn are in
   * (and while a batch runs, the calls that arrive meanwhile go as the next one), so callers
   * that drift apart never wait for each other. @default 5
   */
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
  ready: boolean;
  deadline?: NodeJS.Timeout | NodeJS.Immediate;
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

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  (typeof v === 'object' || typeof v === 'function') && v !== null && typeof (v as { then?: unknown }).then === 'function';

export class BatchedInferenceServer {
  readonly maxBatchSize: number;
  readonly maxQueueDelayMs: number;
  readonly callerTtlMs: number;
  readonly handlerTimeoutMs: number;

  /** Queues still accepting calls, by key. A queue leaves this map when its handler call starts. */
  private readonly queues = new Map<string, BatchQueue>();
  /** Queues that should run, in the order they became ready. */
  private readonly readyQueue: BatchQueue[] = [];
  private readonly lastSeen = new Map<string, number>();
  /** Calls waiting in a queue (not yet running), by caller. */
  private readonly waiting = new Map<string, number>();
  private inFlight = false;
  private closed = false;
  private batches = 0;
  private rows = 0;

  constructor(options: BatchedInferenceServerOptions = {}) {
    this.maxBatchSize = checkOption('maxBatchSize', options.maxBatchSize ?? 16, 1);
    this.maxQueueDelayMs = checkOption('maxQueueDelayMs', options.maxQueueDelayMs ?? 5, 0);
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
      queue = { key, fn, handler, rows: [], ready: false };
      this.queues.set(key, queue);
    }
    const callerId = row.ctx.callerId;
    if (callerId !== undefined) {
      this.lastSeen.set(callerId, Date.now());
      this.waiting.set(callerId, (this.waiting.get(callerId) ?? 0) + 1);
    }

    const q = queue;
    const promise = new Promise<NodeOutputs>((resolve, reject) => {
      const pending: PendingRow = { args: row, resolve, reject };
      const leave = (reason: unknown): void => {
        const i = q.rows.indexOf(pending);
        // Only a row still waiting can leave; once its batch runs, it gets its answer.
        if (i >= 0 && this.queues.get(q.key) === q) {
          q.rows.splice(i, 1);
          this.unwait(pending);
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

    if (q.rows.length >= this.maxBatchSize) this.markReady(q);
    else if (callerId !== undefined && this.everyActiveCallerWaits()) this.markAllReady();
    // The deadline counts from the queue's first call; armed only when that call did not make it ready at once (a timer set and cleared on every call of a lone caller costs more than its batch).
    if (!q.ready && q.deadline === undefined && this.queues.get(q.key) === q)
      q.deadline =
        this.maxQueueDelayMs === 0 ? setImmediate(() => this.markReady(q)) : setTimeout(() => this.markReady(q), this.maxQueueDelayMs);
    return promise;
  }

  /** The caller will make no more calls (its worker finished): stop waiting for it. */
  releaseCaller(callerId: string): void {
    this.lastSeen.delete(callerId);
    if (this.everyActiveCallerWaits()) this.markAllReady();
  }

  stats(): BatcherStats {
    return { batches: this.batches, rows: this.rows, meanBatchSize: this.batches === 0 ? 0 : this.rows / this.batches };
  }

  /** Fails every call still waiting and refuses new ones. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const q of this.queues.values()) {
      this.disarm(q);
      for (const r of q.rows) r.reject(new HostError(`batched function "${q.fn}": the server closed before the batch ran`));
      q.rows.length = 0;
    }
    this.queues.clear();
    this.readyQueue.length = 0;
    this.waiting.clear();
  }

  /** Whether every caller seen within callerTtlMs (at least one) has a call waiting in some queue; forgets callers past it. */
  private everyActiveCallerWaits(): boolean {
    const now = Date.now();
    let active = 0;
    let waiting = true;
    for (const [id, seen] of this.lastSeen) {
      if (now - seen > this.callerTtlMs) {
        this.lastSeen.delete(id);
        continue;
      }
      active++;
      if (!this.waiting.has(id)) waiting = false;
    }
    return active > 0 && waiting;
  }

  private unwait(r: PendingRow): void {
    const id = r.args.ctx.callerId;
    if (id === undefined) return;
    const n = (this.waiting.get(id) ?? 0) - 1;
    if (n > 0) this.waiting.set(id, n);
    else this.waiting.delete(id);
  }

  private markAllReady(): void {
    for (const q of [...this.queues.values()]) if (q.rows.length > 0) this.markReady(q);
  }

  private markReady(q: BatchQueue): void {
    if (q.ready || this.queues.get(q.key) !== q) return;
    q.ready = true;
    this.disarm(q);
    this.readyQueue.push(q);
    this.pump();
  }

  private pump(): void {
    while (!this.inFlight && !this.closed) {
      const q = this.readyQueue.shift();
      if (!q) return;
      // A ready queue keeps accepting calls while it waits for the model; it closes here.
      this.queues.delete(q.key);
      this.disarm(q);
      const rows = q.rows.splice(0, this.maxBatchSize);
      if (q.rows.length > 0) this.requeue(q);
      if (rows.length === 0) continue;
      for (const r of rows) this.unwait(r);
      this.inFlight = true;
      void this.runBatch(q, rows).finally(() => {
        this.inFlight = false;
        this.pump();
      });
    }
  }

  private disarm(q: BatchQueue): void {
    if (q.deadline === undefined) return;
    if (this.maxQueueDelayMs === 0) clearImmediate(q.deadline as NodeJS.Immediate);
    else clearTimeout(q.deadline as NodeJS.Timeout);
    q.deadline = undefined;
  }

  /** Rows beyond maxBatchSize stay queued under the same key, ready at once: they have waited long enough. */
  private requeue(q: BatchQueue): void {
    const rest: BatchQueue = { key: q.key, fn: q.fn, handler: q.handler, rows: q.rows.splice(0), ready: true };
    this.queues.set(q.key, rest);
    this.readyQueue.unshift(rest);
  }

  private async runBatch(q: BatchQueue, rows: PendingRow[]): Promise<void> {
    for (const r of rows) if (r.onAbort) r.args.signal?.removeEventListener('abort', r.onAbort);
    this.batches += 1;
    this.rows += rows.length;
    let timer: NodeJS.Timeout | undefined;
    try {
      // The handler runs after the caller's turn, as it always has; a synchronous one cannot be
      // timed out (it holds the thread) and gets no timer: one set and cleared per batch cost a lone worker tens of µs a step.
      await null;
      let outputs: unknown = q.handler(rows.map((r) => r.args));
      if (isThenable(outputs)) {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new HostError(`batched function "${q.fn}" did not answer a batch of ${rows.length} within ${this.handlerTimeoutMs} ms`),
              ),
            this.handlerTimeoutMs,
          );
        });
        outputs = await Promise.race([outputs, timeout]);
      }
      if (!Array.isArray(outputs) || outputs.length !== rows.length) {
        const got = Array.isArray(outputs) ? `${outputs.length} rows` : typeof outputs;
        throw new HostError(`batched function "${q.fn}" returned ${got} for a batch of ${rows.length} rows`);
      }
      for (const [i, r] of rows.entries()) r.resolve(outputs[i] as NodeOutputs);
    } catch (err) {
      const failure =
        err instanceof HostError ? err : new HostError(`batched function "${q.fn}" failed: ${errorMessage(err)}`, { cause: err });
      for (const r of rows) r.reject(failure);
    } finally {
      clearTimeout(timer);
    }
  }
}
