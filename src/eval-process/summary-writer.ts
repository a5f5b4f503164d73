/**
 * Owns a run's summary.json: every change (start, an episode boundary, the end) rewrites it
 * atomically with a higher `seq`, under one lock so writes never overtake each other.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunStatus } from '../statuses.js';
import { FILES, readSummary, writeSummary } from '../store/run-dir.js';
import type { EpisodeRecord, RunSpec, RunSummary } from '../store/types.js';
import { computeAggregates } from '../store/aggregate.js';
import { playCountOf, repeatsOf } from '../spec/repeats.js';

/** The spec fields a summary repeats. */
export type SummarySpec = Pick<
  RunSpec,
  'runId' | 'graphName' | 'episodeCount' | 'workerCount' | 'seed' | 'priority' | 'createdAt' | 'repeats'
>;

export function initialSummary(spec: SummarySpec, status: RunStatus = 'QUEUED'): RunSummary {
  return {
    seq: 0,
    runId: spec.runId,
    status,
    graphName: spec.graphName,
    // Plays: episodeCount × repeats, the records the run will have (episodesDone counts them too).
    episodeCount: playCountOf(spec),
    ...(repeatsOf(spec) > 1 ? { repeats: repeatsOf(spec) } : {}),
    workerCount: spec.workerCount,
    seed: spec.seed,
    priority: spec.priority,
    episodesDone: 0,
    createdAt: spec.createdAt,
    startedAt: null,
    finishedAt: null,
    error: null,
    aggregateMetrics: [],
    aggregateByTask: {},
    statusCounts: {},
    timedOut: false,
    episodes: [],
  };
}

export class SummaryWriter {
  readonly runDir: string;
  #summary: RunSummary;
  readonly #records = new Map<number, EpisodeRecord>();
  #lock: Promise<unknown> = Promise.resolve();

  private constructor(runDir: string, summary: RunSummary) {
    this.runDir = runDir;
    this.#summary = summary;
  }

  /** Starts from the spec, continuing the `seq` of a summary.json already in the run dir. */
  static async open(runDir: string, spec: RunSpec): Promise<SummaryWriter> {
    const summary = initialSummary(spec);
    if (existsSync(join(runDir, FILES.summary))) {
      try {
        const prev = await readSummary(runDir);
        if (Number.isFinite(prev.seq)) summary.seq = prev.seq;
      } catch {
        // An unreadable summary is replaced; seq restarts above 0.
      }
    }
    return new SummaryWriter(runDir, summary);
  }

  /** A snapshot of the current summary. */
  get summary(): RunSummary {
    return structuredClone(this.#summary);
  }

  get records(): EpisodeRecord[] {
    return [...this.#records.values()].sort((a, b) => a.index - b.index);
  }

  /**
   * Starts from records kept from earlier attempts (a retry plays only the others); call before
   * start(), so no state of the run ever shows fewer records than the one before.
   */
  keep(records: readonly EpisodeRecord[]): void {
    for (const r of records) this.#records.set(r.index, r);
    const kept = this.records;
    Object.assign(this.#summary, computeAggregates(kept));
    this.#summary.episodes = kept;
    this.#summary.episodesDone = kept.length;
  }

  /** Marks the run RUNNING (with the eval process pid) and writes it. */
  start(pid: number = process.pid, startedAt = new Date()): Promise<RunSummary> {
    return this.#update((s) => {
      s.status = 'RUNNING';
      s.startedAt = startedAt.toISOString();
      s.pid = pid;
    });
  }

  /** Adds (or replaces) an episode's record, recomputes the aggregates in index order, writes. */
  addEpisode(record: EpisodeRecord): Promise<RunSummary> {
    return this.#update((s) => {
      this.#records.set(record.index, record);
      const records = this.records;
      Object.assign(s, computeAggregates(records));
      s.episodes = records;
      s.episodesDone = records.length;
    });
  }

  /** Writes the terminal state. */
  finish(status: RunStatus, error: { code: string; message: string } | null = null, finishedAt = new Date()): Promise<RunSummary> {
    return this.#update((s) => {
      s.status = status;
      s.error = error;
      s.finishedAt = finishedAt.toISOString();
      delete s.pid;
    });
  }

  #update(change: (s: RunSummary) => void): Promise<RunSummary> {
    const next = this.#lock.then(async () => {
      change(this.#summary);
      this.#summary.seq += 1;
      const snapshot = this.summary;
      await writeSummary(this.runDir, snapshot);
      return snapshot;
    });
    this.#lock = next.catch(() => {});
    return next;
  }
}
