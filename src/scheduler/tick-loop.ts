/**
 * A periodic step that never overlaps itself: a tick asked for while one runs makes that one
 * go round again instead of starting a second; requests in the same turn share one tick.
 */
import { errorMessage } from '../errors.js';

export interface TickLoopOptions {
  intervalMs: number;
  /** One tick. */
  run(): Promise<void>;
  /** False while ticks cannot run yet (they return at once). */
  ready(): boolean;
  onError(message: string): void;
}

export class TickLoop {
  private readonly opts: TickLoopOptions;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private scheduled = false;
  private stopped = false;

  constructor(opts: TickLoopOptions) {
    this.opts = opts;
  }

  /** Starts the periodic ticks (they do not hold the process open). */
  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** A tick on the next turn of the event loop; several requests in one turn make one tick. */
  request(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.tick();
    });
  }

  /** Runs a tick now (coalesced with one in progress). */
  tick(): Promise<void> {
    if (this.stopped || !this.opts.ready()) return Promise.resolve();
    if (this.ticking) {
      this.again = true;
      return this.ticking;
    }
    this.ticking = (async () => {
      try {
        do {
          this.again = false;
          await this.opts.run();
        } while (this.again && !this.stopped);
      } catch (err) {
        this.opts.onError(`tick failed: ${errorMessage(err)}`);
      } finally {
        this.ticking = null;
      }
    })();
    return this.ticking;
  }

  /** No tick starts after this; the one in progress finishes (see settled()). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Resolves once no tick is running. */
  async settled(): Promise<void> {
    while (this.ticking) await this.ticking.catch(() => {});
  }
}
