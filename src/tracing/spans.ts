/**
 * The spans a run produces, as the runner sees them. Without tracing nobody holds one of these:
 * callers keep an `undefined` and skip every call, so a run without tracing does no tracing work.
 */

export type SpanAttributeValue = string | number | boolean | string[];

/** What a run span says about its run. */
export interface RunSpanInfo {
  runId: string;
  graph: string;
  episodes: number;
  workers: number;
  seed: number;
}

/** A span that covers one phase of a run (host start-up). */
export interface PhaseSpan {
  end(error?: string): void;
}

export interface RunSpan {
  /** This span as a W3C `traceparent`, for a child process to put its spans under. */
  readonly traceparent: string;
  readonly traceId: string;
  /** A child span that starts now. */
  phase(name: string, attributes?: Record<string, SpanAttributeValue>): PhaseSpan;
  /** An episode span that starts now. */
  startEpisode(info: EpisodeSpanInfo): EpisodeSpan;
  /** Ends the span with the run's final status (once; later calls do nothing). */
  end(status: string, error?: { code: string; message: string } | null): void;
}

export interface EpisodeSpanInfo {
  /** The record index within the run. */
  index: number;
  /** The env's episode index (offset applied). */
  episodeIndex: number;
  seed: number;
  workerId: number;
}

/** A node firing as the executor logs it (see FiringLogEntry). */
export interface FiringInfo {
  step: number;
  nodeId: string;
  type: string;
  ms: number;
  error?: string;
}

/** An event a node put in its `$events` output (see EpisodeEvent); `llm_call` events become model-call spans. */
export interface NodeEventInfo {
  step: number;
  nodeId: string;
  type?: string;
  [key: string]: unknown;
}

export interface EpisodeOutcomeInfo {
  episodeId: string;
  status: string;
  steps: number;
  stepBudget: number;
  durationMs: number;
  metrics: Record<string, SpanAttributeValue>;
  error?: string;
}

export interface EpisodeSpan {
  /** The W3C trace id (32 hex digits) of the episode's trace. */
  readonly traceId: string;
  /** The episode span's id (16 hex digits). */
  readonly spanId: string;
  /** The episode is loaded and its loop starts now (the time since the span's start is its load). */
  loopStarted(): void;
  /** A node firing of the step in progress (the executor reports them as the step ends). */
  firing(entry: FiringInfo): void;
  /** An event of the step in progress (the executor reports them as the step ends, before `stepEnded`). */
  event(event: NodeEventInfo): void;
  /** Iteration `step` ended now; its span runs from the end of the previous one. */
  stepEnded(step: number): void;
  /** Ends the episode span (and a step cut short by the ending) with the episode's record. */
  end(outcome: EpisodeOutcomeInfo): void;
}

/** A process's tracing: loaded only when an OTLP endpoint is configured. */
export interface Tracing {
  /** The URL spans are posted to. */
  readonly url: string;
  /** A run span, a root or under `parent` (a W3C traceparent). */
  startRun(info: RunSpanInfo, parent?: string): RunSpan;
  /**
   * The run span another process owns (the server's, handed over as `parent`): this process's
   * episodes go under it and `end` does nothing. An unreadable `parent` starts a run span here.
   */
  joinRun(info: RunSpanInfo, parent: string): RunSpan;
  /** Exports what is buffered and stops (idempotent; bounded in time). */
  shutdown(): Promise<void>;
}
