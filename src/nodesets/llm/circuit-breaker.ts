/**
 * A circuit breaker per endpoint (base URL), shared by every caller in this host process: the
 * `llm` nodeset runs `shared`, so one host per machine serves every run, and an endpoint that
 * stays down is found out once for all of them. After `failures` connection failures in a row
 * (refused, reset, DNS, timed out: no HTTP answer at all) the circuit opens and calls fail at once
 * with a CircuitOpenError. Once `cooldownMs` has passed, one call is let through as a probe
 * (half-open) while the others still fail at once: any HTTP answer to it closes the circuit, a
 * connection failure opens it for another cool-down.
 */
import { CodedError } from '../../errors.js';

export interface CircuitOptions {
  /** Connection failures in a row that open the circuit; 0 never opens it. @default 5 */
  failures: number;
  /** How long an open circuit refuses calls before it lets one probe through, in ms. @default 10000 */
  cooldownMs: number;
}

/** Calls to an endpoint whose circuit is open fail at once, without a request. */
export class CircuitOpenError extends CodedError {
  readonly baseURL: string;
  constructor(baseURL: string, failures: number, lastError: string) {
    super(
      'LLM_CIRCUIT_OPEN',
      `${baseURL} is unreachable: ${failures} connection failure(s) in a row, the last: ${lastError}; its calls fail at once until a probe call gets an answer`,
    );
    this.baseURL = baseURL;
  }
}

type State = 'closed' | 'open' | 'half-open';

export class CircuitBreaker {
  readonly baseURL: string;
  options: CircuitOptions;
  #state: State = 'closed';
  #failures = 0;
  #lastError = '';
  #openedAt = 0;
  readonly #now: () => number;

  constructor(baseURL: string, options: CircuitOptions, now: () => number = () => performance.now()) {
    this.baseURL = baseURL;
    this.options = options;
    this.#now = now;
  }

  get state(): State {
    return this.#state;
  }

  /**
   * Whether a call may go out now: throws a CircuitOpenError when the circuit is open (or half-open
   * with its probe on the way). Returns true when this call is the probe.
   */
  admit(): boolean {
    if (this.#state === 'closed') return false;
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.options.cooldownMs) {
      this.#state = 'half-open';
      return true;
    }
    throw this.openError();
  }

  /** The error a refused call fails with: the URL, the failures in a row, the last one. */
  openError(): CircuitOpenError {
    return new CircuitOpenError(this.baseURL, this.#failures, this.#lastError);
  }

  /** An HTTP answer came (of any status): the endpoint is reachable. */
  succeeded(): void {
    this.#state = 'closed';
    this.#failures = 0;
  }

  /** No HTTP answer came: refused, reset, DNS, timed out. */
  failed(error: string): void {
    this.#failures++;
    this.#lastError = error;
    const { failures } = this.options;
    if (this.#state === 'half-open' || (failures > 0 && this.#failures >= failures)) {
      this.#state = 'open';
      this.#openedAt = this.#now();
    }
  }

  /** The probe ended with no verdict (its episode was cancelled): the next call may probe again. */
  probeAbandoned(): void {
    if (this.#state === 'half-open') {
      this.#state = 'open';
      this.#openedAt = this.#now() - this.options.cooldownMs;
    }
  }
}

const breakers = new Map<string, CircuitBreaker>();

/** The breaker of `baseURL`; the latest options configured win, as for the concurrency limit. */
export function breakerFor(baseURL: string, options: CircuitOptions): CircuitBreaker {
  let b = breakers.get(baseURL);
  if (!b) {
    b = new CircuitBreaker(baseURL, options);
    breakers.set(baseURL, b);
  } else {
    b.options = options;
  }
  return b;
}
