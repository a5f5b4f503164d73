/**
 * How many calls go out at once to one endpoint (base URL, model), shared by every caller in this
 * host process: the `llm` nodeset runs `shared`, so one host per machine serves every run and this
 * limit holds machine-wide.
 *
 * Adaptive (the default) it is an AIMD limit with slow start, as TCP and Netflix's AIMDLimit: it
 * starts at `initial`; while the limit is in use and latency holds (the recent mean latency within
 * LATENCY_TOLERANCE of the fastest seen lately, as Gradient2 compares them) each answered call raises it by 1 (doubling per
 * round trip) until the first cut, then by 1 / level (one per round trip). A 429 or 503 cuts it to
 * BACKOFF × level, once per round trip: a call granted before the last cut does not cut again. A
 * `Retry-After` on such an answer holds every new call to the endpoint until it has passed. Fixed
 * (`max_concurrency` set) the level stays put; 429s are counted and Retry-After honoured the same.
 *
 * Waiting calls are granted round-robin between callers (a run each), not in arrival order, so
 * two runs on one endpoint share it call for call whatever their worker counts. The limiter only
 * changes when a call goes out, never what it asks or what it is answered.
 */
import type { EndpointStats } from '../../core/types.js';

export interface LimiterSettings {
  /** A fixed level: adaptation off. */
  fixed: number | undefined;
  /** The level an adaptive limiter starts at. */
  initial: number;
  floor: number;
  cap: number;
}

/** How a call that held a slot ended. */
export type CallOutcome =
  | { kind: 'answered'; latencyMs: number }
  /** A 429 or 503: the endpoint asks for less. */
  | { kind: 'overloaded'; status: number; retryAfterMs: number | undefined }
  /** Anything else (another error, an abort): no signal about the endpoint's capacity. */
  | { kind: 'other' };

/** A held slot; `release` is idempotent. */
export interface Permit {
  release(outcome: CallOutcome): void;
}

/** A level cut keeps this share: CUBIC's β (TCP Reno halves; Netflix's AIMDLimit keeps 0.9). */
export const BACKOFF = 0.7;
/** Latency "holds" while the recent mean latency is within this factor of the fastest seen lately (Gradient2's default is 2). */
export const LATENCY_TOLERANCE = 2;
/** Plus this much, so the jitter of a near-zero latency (a local server) does not read as queueing. */
const LATENCY_SLACK_MS = 25;
/** Weight of a new answer in the recent mean latency: about the last 20 answers count, so one slow answer does not stop the climb. */
const LATENCY_SMOOTHING = 0.1;
/** Answers per window of the fastest-latency estimate: the baseline is the least of this window's and the last. */
const LATENCY_WINDOW = 200;
/** The longest Retry-After honoured: a wrong header cannot stall every run on the machine for long. */
export const MAX_RETRY_AFTER_MS = 60_000;
const CALLER_MEMORY_MS = 60_000;
/** Callers remembered before the idle ones are forgotten without a stats read: a long-lived host meets many runs. */
const MAX_CALLERS_KEPT = 256;

interface Waiter {
  caller: string;
  grant(): void;
}

export class EndpointLimiter {
  readonly baseUrl: string;
  readonly model: string;
  #settings: LimiterSettings;
  #level: number;
  /** Where slow start ends; Infinity until the first cut. */
  #threshold = Number.POSITIVE_INFINITY;
  #inFlight = 0;
  /** Answers towards the next additive step. */
  #credit = 0;
  /** Cuts so far: a permit granted under an older count does not cut again. */
  #cuts = 0;
  #answered = 0;
  #count429 = 0;
  #count503 = 0;
  #lastRetryAfterMs: number | null = null;
  #pausedUntil = 0;
  #pauseTimer: NodeJS.Timeout | undefined;
  #latencyMin = Number.POSITIVE_INFINITY;
  #latencyPrevMin = Number.POSITIVE_INFINITY;
  #latencyCount = 0;
  #latencyMean: number | undefined;
  /** Waiting calls by caller, and the callers with any, in round-robin order from `#turn`. */
  readonly #queues = new Map<string, Waiter[]>();
  readonly #ring: string[] = [];
  #turn = 0;
  readonly #seen = new Map<string, number>();
  readonly #now: () => number;

  constructor(baseUrl: string, model: string, settings: LimiterSettings, now: () => number = Date.now) {
    this.baseUrl = baseUrl;
    this.model = model;
    this.#settings = settings;
    this.#level = settings.fixed ?? clamp(settings.initial, settings.floor, settings.cap);
    this.#now = now;
  }

  /** The latest configured settings win; a fixed level takes effect at once, an adaptive one keeps its level within the new bounds. */
  configure(settings: LimiterSettings): void {
    const s = this.#settings;
    if (s.fixed === settings.fixed && s.initial === settings.initial && s.floor === settings.floor && s.cap === settings.cap) return;
    this.#settings = settings;
    this.#level = settings.fixed ?? clamp(s.fixed === undefined ? this.#level : settings.initial, settings.floor, settings.cap);
    this.#drain();
  }

  get level(): number {
    return Math.floor(this.#level);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Resolves with a permit once a slot is free and no Retry-After holds the endpoint; rejects
   * with the signal's reason if it aborts first. `caller` (a run id) is the unit of fairness.
   * `runInFlight`, the calls its run would have in flight, lifts an adaptive level that has not
   * yet been cut up to it (within the cap): a run asking for 256 at once need not climb from 16.
   */
  acquire(caller: string, signal?: AbortSignal, runInFlight?: number): Promise<Permit> {
    signal?.throwIfAborted();
    if (this.#seen.size >= MAX_CALLERS_KEPT) this.#forgetIdleCallers(this.#now());
    this.#seen.set(caller, this.#now());
    if (runInFlight !== undefined && this.#settings.fixed === undefined && this.#threshold === Number.POSITIVE_INFINITY) {
      this.#level = Math.max(this.#level, Math.min(this.#settings.cap, runInFlight));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        caller,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#inFlight++;
          resolve(this.#permit());
        },
      };
      const onAbort = (): void => {
        this.#remove(waiter);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      let queue = this.#queues.get(caller);
      if (!queue) {
        queue = [];
        this.#queues.set(caller, queue);
        // A new caller waits a full turn: placed just before the one whose turn it is.
        this.#ring.splice(this.#turn, 0, caller);
        this.#turn++;
      }
      queue.push(waiter);
      this.#drain();
    });
  }

  stats(): EndpointStats {
    const now = this.#now();
    let waiting = 0;
    for (const q of this.#queues.values()) waiting += q.length;
    this.#forgetIdleCallers(now);
    return {
      baseUrl: shownBaseUrl(this.baseUrl),
      model: this.model,
      mode: this.#settings.fixed === undefined ? 'adaptive' : 'fixed',
      level: this.level,
      floor: this.#settings.fixed ?? this.#settings.floor,
      cap: this.#settings.fixed ?? this.#settings.cap,
      inFlight: this.#inFlight,
      waiting,
      answered: this.#answered,
      count429: this.#count429,
      count503: this.#count503,
      lastRetryAfterMs: this.#lastRetryAfterMs,
      pausedForMs: Math.max(0, this.#pausedUntil - now),
      callers: [...this.#seen.keys()].sort(),
    };
  }

  #forgetIdleCallers(now: number): void {
    for (const [caller, at] of this.#seen) if (now - at > CALLER_MEMORY_MS && !this.#queues.has(caller)) this.#seen.delete(caller);
  }

  #permit(): Permit {
    const cutsAtGrant = this.#cuts;
    const levelAtGrant = this.#level;
    const inFlightAtGrant = this.#inFlight;
    let released = false;
    return {
      release: (outcome) => {
        if (released) return;
        released = true;
        const busiest = Math.max(inFlightAtGrant, this.#inFlight);
        this.#inFlight--;
        if (outcome.kind === 'answered') this.#answered++;
        if (outcome.kind === 'answered' && this.#settings.fixed === undefined) {
          // Raised only when the limit was in use while the call was out: a level no one reaches proves nothing.
          if (busiest * 2 >= levelAtGrant) this.#raise(outcome.latencyMs);
          else this.#observeLatency(outcome.latencyMs);
        } else if (outcome.kind === 'overloaded') {
          this.#overloaded(outcome, cutsAtGrant);
        }
        this.#drain();
      },
    };
  }

  #raise(latencyMs: number): void {
    const baseline = this.#observeLatency(latencyMs);
    const holds = (this.#latencyMean ?? latencyMs) <= baseline * LATENCY_TOLERANCE + LATENCY_SLACK_MS;
    if (!holds) {
      // Queueing at the endpoint: stop doubling, hold the level.
      this.#threshold = Math.min(this.#threshold, this.#level);
      return;
    }
    if (this.#level < this.#threshold) {
      this.#level = Math.min(this.#settings.cap, this.#level + 1);
    } else if (++this.#credit >= this.#level) {
      // Additive: one more after a level's worth of answers, counted whole so no rounding loses the step.
      this.#credit = 0;
      this.#level = Math.min(this.#settings.cap, this.#level + 1);
    }
  }

  /** Adds a latency sample; returns the baseline (the fastest of this window and the last). */
  #observeLatency(latencyMs: number): number {
    if (++this.#latencyCount > LATENCY_WINDOW) {
      this.#latencyPrevMin = this.#latencyMin;
      this.#latencyMin = Number.POSITIVE_INFINITY;
      this.#latencyCount = 1;
    }
    this.#latencyMin = Math.min(this.#latencyMin, latencyMs);
    this.#latencyMean =
      this.#latencyMean === undefined ? latencyMs : this.#latencyMean + LATENCY_SMOOTHING * (latencyMs - this.#latencyMean);
    return Math.min(this.#latencyMin, this.#latencyPrevMin);
  }

  #overloaded(outcome: Extract<CallOutcome, { kind: 'overloaded' }>, cutsAtGrant: number): void {
    if (outcome.status === 429) this.#count429++;
    else this.#count503++;
    if (outcome.retryAfterMs !== undefined) {
      const ms = Math.min(MAX_RETRY_AFTER_MS, Math.max(0, outcome.retryAfterMs));
      this.#lastRetryAfterMs = ms;
      this.#pause(this.#now() + ms);
    }
    if (this.#settings.fixed !== undefined || cutsAtGrant !== this.#cuts) return;
    this.#cuts++;
    this.#level = Math.max(this.#settings.floor, Math.floor(this.#level * BACKOFF));
    this.#credit = 0;
    this.#threshold = this.#level;
  }

  #pause(until: number): void {
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    clearTimeout(this.#pauseTimer);
    this.#pauseTimer = setTimeout(() => this.#drain(), until - this.#now());
    // A held endpoint must not keep the host alive on its own.
    this.#pauseTimer.unref();
  }

  #remove(waiter: Waiter): void {
    const queue = this.#queues.get(waiter.caller);
    if (!queue) return;
    const i = queue.indexOf(waiter);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) this.#dropCaller(waiter.caller);
  }

  #dropCaller(caller: string): void {
    this.#queues.delete(caller);
    const at = this.#ring.indexOf(caller);
    if (at < 0) return;
    this.#ring.splice(at, 1);
    if (at < this.#turn) this.#turn--;
  }

  #drain(): void {
    if (this.#pausedUntil > this.#now()) return;
    while (this.#inFlight < this.level && this.#ring.length > 0) {
      if (this.#turn >= this.#ring.length) this.#turn = 0;
      const caller = this.#ring[this.#turn]!;
      const queue = this.#queues.get(caller)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.#dropCaller(caller);
      else this.#turn++;
      this.#seen.set(caller, this.#now());
      waiter.grant();
    }
  }
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

/** A base URL as stats show it: no user, password, query or fragment (a key may hide in any). */
export function shownBaseUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return '(not a URL)';
  }
}

const limiters = new Map<string, EndpointLimiter>();

/** This process's limiter of (baseUrl, model), made on first use; the latest settings win. */
export function limiterFor(baseUrl: string, model: string, settings: LimiterSettings): EndpointLimiter {
  const key = `${baseUrl}\u0000${model}`;
  let l = limiters.get(key);
  if (!l) {
    l = new EndpointLimiter(baseUrl, model, settings);
    limiters.set(key, l);
  } else {
    l.configure(settings);
  }
  return l;
}

/** Every endpoint this process has called, sorted by base URL then model. */
export function endpointLimiterStats(): EndpointStats[] {
  return [...limiters.values()]
    .map((l) => l.stats())
    .sort((a, b) => (a.baseUrl === b.baseUrl ? (a.model < b.model ? -1 : 1) : a.baseUrl < b.baseUrl ? -1 : 1));
}
