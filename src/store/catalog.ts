/**
 * The run catalog: a lowdb index at `<outputs>/db.json` of runs, calibration samples and
 * scheduler settings. The run directories are the truth; the catalog is rebuilt from them
 * whenever db.json is missing or unreadable.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { isTerminalRunStatus, type RunStatus, RUN_STATUSES } from '../statuses.js';
import { readJson } from './atomic.js';
import { FILES, isDone, isValidRunId, runsRoot } from './run-dir.js';
import type { EpisodeStatus } from '../statuses.js';
import type { MetricAggregate, RunSummary } from './types.js';
import { RUN_DEFAULTS } from '../spec/run-spec.js';
import { matchesSearch, type RunLabels } from '../spec/run-labels.js';
import { readRunLabels } from './labels-file.js';
import { effectiveWorkerCount } from '../spec/effective-workers.js';
import { makeDirs } from './make-dirs.js';
import { changedAfterFinish, recordedSummary } from './summary-digest.js';

export const CATALOG_FILE = 'db.json';
/** Calibration samples kept per (graph, worker count); the estimate is the largest of them. */
export const CALIBRATION_WINDOW = 5;

/** One run as the catalog indexes it (no episode records: those stay in the run dir). */
export interface CatalogRun {
  id: string;
  graphName: string;
  status: RunStatus;
  priority: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  episodeCount: number;
  episodesDone: number;
  workerCount: number;
  statusCounts: Partial<Record<EpisodeStatus, number>>;
  aggregateMetrics: MetricAggregate[];
  error: { code: string; message: string } | null;
  pid: number | null;
  viaSubprocess: boolean;
  /** Name, tags and note (labels.json, else the spec's); absent in rows indexed before labels existed. */
  labels?: RunLabels;
  /** summary.json was changed after the run finished: the row is the state recorded at its finish. */
  summaryModified?: true;
}

export interface CalibrationSample {
  graphName: string;
  workerCount: number;
  peakRssMb: number;
  /** Largest GPU memory of the run's processes, MB; absent where it was not measured (or none was used). */
  peakVramMb?: number;
  /** Average CPU cores the run's processes kept busy (CPU time / wall time); absent where not measured. */
  cpuCores?: number;
  recordedAt: string;
}

export interface CatalogData {
  version: 1;
  runs: Record<string, CatalogRun>;
  calibration: CalibrationSample[];
  settings: Record<string, unknown>;
}

export interface ListRunsOptions {
  status?: RunStatus | RunStatus[];
  graphName?: string;
  /** Only runs carrying this tag. */
  tag?: string;
  /** Only runs whose id, graph, name, tags or note contain this text (case-insensitive). */
  search?: string;
  /** @default 0 */
  offset?: number;
  /** Page size. @default all */
  first?: number;
}

export interface CatalogLogger {
  info(message: string): void;
  warn(message: string): void;
}

/** What process.json in a run dir holds: written at spawn, completed at reap. */
export interface ProcessRecord {
  pid: number;
  startedAt: string;
  command: string[];
  /** Largest RSS of the process tree seen while it ran, MB. */
  peakRssMb?: number;
  /** Largest GPU memory of the process tree seen while it ran (nvidia-smi), MB; absent when none was seen. */
  peakVramMb?: number;
  /** Average CPU cores the process tree kept busy while it was sampled (CPU time / wall time). */
  cpuCores?: number;
  exitCode?: number | null;
  signal?: string | null;
  /** When the backend saw the process exit. */
  exitedAt?: string;
}

const emptyData = (): CatalogData => ({ version: 1, runs: {}, calibration: [], settings: {} });

function isCatalogData(v: unknown): v is CatalogData {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Partial<CatalogData>;
  return (
    d.version === 1 &&
    typeof d.runs === 'object' &&
    d.runs !== null &&
    !Array.isArray(d.runs) &&
    Array.isArray(d.calibration) &&
    typeof d.settings === 'object' &&
    d.settings !== null
  );
}

/** The catalog's view of a summary (plus what only the spec or process.json knows). */
export function catalogRunFromSummary(
  summary: RunSummary,
  extra: { viaSubprocess?: boolean; pid?: number | null } = {},
  /** Read the summary's counts and aggregates only when the row's are read (a watcher's state computes them then). */
  lazy = false,
): CatalogRun {
  const row: CatalogRun = {
    id: summary.runId,
    graphName: summary.graphName,
    status: summary.status,
    priority: summary.priority,
    createdAt: summary.createdAt,
    startedAt: summary.startedAt,
    finishedAt: summary.finishedAt,
    episodeCount: summary.episodeCount,
    episodesDone: summary.episodesDone,
    workerCount: summary.workerCount,
    statusCounts: lazy ? {} : (summary.statusCounts ?? {}),
    aggregateMetrics: lazy ? [] : (summary.aggregateMetrics ?? []),
    error: summary.error ?? null,
    pid: extra.pid ?? summary.pid ?? null,
    viaSubprocess: extra.viaSubprocess ?? RUN_DEFAULTS.viaSubprocess,
    ...(summary.summaryModified ? { summaryModified: true } : {}),
  };
  if (!lazy) return row;
  // Redefined in place, so the keys keep their order.
  return Object.defineProperties(row, {
    statusCounts: { get: () => summary.statusCounts ?? {}, enumerable: true, configurable: true },
    aggregateMetrics: { get: () => summary.aggregateMetrics ?? [], enumerable: true, configurable: true },
  });
}

/** Newest first: createdAt, then run id (ids sort by time, with the collision suffix last). */
export const compareNewestFirst = (a: CatalogRun, b: CatalogRun): number =>
  a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : compareRunIds(b.id, a.id);

/** Orders run ids by time, `_2` before `_10`. */
export function compareRunIds(a: string, b: string): number {
  const abase = a.slice(0, 15);
  const bbase = b.slice(0, 15);
  if (abase !== bbase) return abase < bbase ? -1 : 1;
  return (a.length > 16 ? Number(a.slice(16)) : 0) - (b.length > 16 ? Number(b.slice(16)) : 0);
}

export class RunCatalog {
  readonly path: string;
  readonly outputsDir: string;
  private readonly db: Low<CatalogData>;
  private readonly logger: CatalogLogger | undefined;
  private writing: Promise<void> | null = null;
  private dirty = false;
  private closed = false;
  /** The last write of db.json failed (a full or read-only disk): the next sync tries again, and warns once. */
  private writeFailed = false;
  /** inode/size/mtime of the summary.json last indexed, for runs another process writes (each atomic write is a new inode). */
  private readonly indexedStamp = new Map<string, string>();

  private constructor(outputsDir: string, db: Low<CatalogData>, logger?: CatalogLogger) {
    this.outputsDir = outputsDir;
    this.path = join(outputsDir, CATALOG_FILE);
    this.db = db;
    this.logger = logger;
  }

  /**
   * Opens `<outputsDir>/db.json`. When it is missing or corrupt it is rebuilt from the run
   * directories (a corrupt file is kept beside it as `db.json.corrupt-<time>`), and the log says so.
   * Runs whose directory exists but that the catalog does not know yet are added.
   */
  static async open(outputsDir: string, logger?: CatalogLogger): Promise<RunCatalog> {
    const dir = resolve(outputsDir);
    makeDirs(dir);
    const file = join(dir, CATALOG_FILE);
    const db = new Low<CatalogData>(new JSONFile<CatalogData>(file), emptyData());
    const catalog = new RunCatalog(dir, db, logger);
    let rebuild: string | null = null;
    if (!existsSync(file)) {
      rebuild = `${file} is missing`;
    } else {
      try {
        await db.read();
        if (!isCatalogData(db.data)) throw new Error('unexpected shape');
      } catch (err) {
        const kept = `${file}.corrupt-${Date.now()}`;
        await rename(file, kept).catch(() => {});
        rebuild = `${file} is corrupt (${err instanceof Error ? err.message : String(err)}; kept as ${kept})`;
      }
    }
    if (rebuild !== null) {
      db.data = emptyData();
      const n = await catalog.indexRunDirs(() => true);
      if (n === 0 && !existsSync(runsRoot(dir)) && !rebuild.includes('corrupt')) logger?.info(`catalog: created ${file}`);
      else logger?.warn(`catalog: ${rebuild}; rebuilt from the run directories (${n} runs)`);
      catalog.schedule();
      await catalog.flush();
    } else {
      const known = db.data.runs;
      // Runs whose directory was deleted while no backend ran are gone.
      let gone = 0;
      for (const id of Object.keys(known)) {
        if (existsSync(join(runsRoot(dir), id))) continue;
        delete known[id];
        gone++;
      }
      if (gone > 0) logger?.warn(`catalog: ${gone} run(s) whose directory is gone were removed`);
      // Dirs the catalog missed (a crash between the run dir write and the catalog's) and runs it still thinks are live.
      const n = await catalog.indexRunDirs((id) => !known[id] || !isTerminalRunStatus(known[id].status));
      if (n > 0 || gone > 0) {
        catalog.schedule();
        await catalog.flush();
      }
    }
    return catalog;
  }

  /** Reads the run dirs selected by `want` into the catalog; returns how many were indexed. */
  private async indexRunDirs(want: (runId: string) => boolean): Promise<number> {
    const root = runsRoot(this.outputsDir);
    let names: string[];
    try {
      names = await readdir(root);
    } catch {
      return 0;
    }
    let n = 0;
    for (const id of names) {
      if (!isValidRunId(id) || !want(id)) continue;
      if (await this.indexRunDir(root, id)) n++;
    }
    return n;
  }

  /**
   * Reads one run dir into the catalog; false when its summary is unreadable, or when `expected`
   * is given and the run's row changed while the files were read (its owner wrote a newer one).
   */
  private async indexRunDir(root: string, id: string, expected?: { row: CatalogRun | undefined }): Promise<boolean> {
    const runDir = join(root, id);
    let summary: RunSummary;
    try {
      const text = await readFile(join(runDir, FILES.summary), 'utf8');
      // A finished run's summary.json edited since its finish: the row is the state recorded then.
      const modified = await changedAfterFinish(runDir, text);
      summary = modified ? await recordedSummary(runDir, modified) : (JSON.parse(text) as RunSummary);
    } catch {
      return false;
    }
    if (!RUN_STATUSES.includes(summary.status)) return false;
    let viaSubprocess: boolean = RUN_DEFAULTS.viaSubprocess;
    try {
      // One field is all the row needs: no need to check the whole spec (its frozen graph included) here.
      viaSubprocess = (await readJson<{ viaSubprocess?: unknown }>(join(runDir, FILES.spec))).viaSubprocess !== false;
    } catch {
      // spec unreadable: keep the default
    }
    let proc: ProcessRecord | null = null;
    try {
      proc = await readJson<ProcessRecord>(join(runDir, FILES.process));
    } catch {
      proc = null;
    }
    const labels = await readRunLabels(runDir);
    if (expected && this.db.data.runs[id] !== expected.row) return false;
    this.db.data.runs[id] = {
      ...catalogRunFromSummary(summary, { viaSubprocess, pid: proc?.pid ?? null }),
      labels,
    };
    if (proc?.peakRssMb !== undefined && summary.status === 'COMPLETED' && isDone(runDir)) {
      this.pushCalibration({
        graphName: summary.graphName,
        workerCount: effectiveWorkerCount(summary),
        peakRssMb: proc.peakRssMb,
        ...(typeof proc.peakVramMb === 'number' && proc.peakVramMb > 0 ? { peakVramMb: proc.peakVramMb } : {}),
        ...(typeof proc.cpuCores === 'number' && proc.cpuCores > 0 ? { cpuCores: proc.cpuCores } : {}),
        recordedAt: summary.finishedAt ?? summary.createdAt,
      });
    }
    return true;
  }

  /**
   * Brings the catalog in line with the run dirs while the backend runs: a new dir (a run
   * `evalctl run` writes into these outputs) is added, a live run nobody here owns is re-read
   * when its summary.json changes, and a run whose dir was deleted is removed. Runs `owned`
   * by the scheduler are its to update. Returns whether anything changed.
   */
  async syncRunDirs(owned: (runId: string) => boolean = () => false): Promise<boolean> {
    const root = runsRoot(this.outputsDir);
    let names: string[];
    try {
      names = await readdir(root);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      names = [];
    }
    const present = new Set(names.filter(isValidRunId));
    let changed = false;
    for (const id of Object.keys(this.db.data.runs)) {
      if (present.has(id) || owned(id)) continue;
      delete this.db.data.runs[id];
      this.indexedStamp.delete(id);
      this.logger?.info(`catalog: run ${id} is gone from ${root}; removed`);
      changed = true;
    }
    for (const id of present) {
      const row = this.db.data.runs[id];
      // The cheap test first: almost every run dir is a finished run.
      if ((row && isTerminalRunStatus(row.status)) || owned(id)) continue;
      let stamp: string;
      try {
        const st = await stat(join(root, id, FILES.summary));
        stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch {
        continue; // no summary yet
      }
      if (row && this.indexedStamp.get(id) === stamp) continue;
      if (owned(id)) continue; // the scheduler took it meanwhile
      // The scheduler may write the run's row while its files are read (a queued run it is cancelling is in none of its sets): its row wins.
      if (await this.indexRunDir(root, id, { row })) {
        this.indexedStamp.set(id, stamp);
        changed = true;
      }
    }
    if (changed || this.writeFailed) this.schedule();
    return changed;
  }

  /** Inserts or replaces a run (fields given replace the stored ones). */
  upsertRun(run: CatalogRun | (Partial<CatalogRun> & { id: string })): CatalogRun {
    const prev = this.db.data.runs[run.id];
    const next = { ...(prev ?? emptyRun(run.id)), ...run } as CatalogRun;
    this.db.data.runs[run.id] = next;
    this.schedule();
    return next;
  }

  getRun(id: string): CatalogRun | undefined {
    return this.db.data.runs[id];
  }

  /** Sets a run's labels (after labels.json was written); false for a run the catalog does not know. */
  setLabels(id: string, labels: RunLabels): boolean {
    const row = this.db.data.runs[id];
    if (!row) return false;
    row.labels = labels;
    this.schedule();
    return true;
  }

  /** Newest first, filtered by status and graph name, then paged. */
  listRuns(opts: ListRunsOptions = {}): CatalogRun[] {
    const statuses = opts.status === undefined ? null : new Set(Array.isArray(opts.status) ? opts.status : [opts.status]);
    const rows = Object.values(this.db.data.runs).filter(
      (r) =>
        (statuses === null || statuses.has(r.status)) &&
        (opts.graphName === undefined || r.graphName === opts.graphName) &&
        (opts.tag === undefined || (r.labels?.tags ?? []).includes(opts.tag)) &&
        (opts.search === undefined || matchesSearch(r, opts.search)),
    );
    rows.sort(compareNewestFirst);
    const offset = Math.max(0, opts.offset ?? 0);
    return opts.first === undefined ? rows.slice(offset) : rows.slice(offset, offset + Math.max(0, opts.first));
  }

  /** How many runs match (for paging). */
  countRuns(opts: Omit<ListRunsOptions, 'offset' | 'first'> = {}): number {
    return this.listRuns(opts).length;
  }

  recordCalibration(graphName: string, workerCount: number, peakRssMb: number, peakVramMb?: number, cpuCores?: number): void {
    const vram = peakVramMb !== undefined && peakVramMb > 0 ? { peakVramMb } : {};
    const cpu = cpuCores !== undefined && cpuCores > 0 ? { cpuCores } : {};
    this.pushCalibration({ graphName, workerCount, peakRssMb, ...vram, ...cpu, recordedAt: new Date().toISOString() });
    this.schedule();
  }

  private pushCalibration(sample: CalibrationSample): void {
    const all = this.db.data.calibration;
    all.push(sample);
    const same = all.filter((s) => s.graphName === sample.graphName && s.workerCount === sample.workerCount);
    if (same.length > CALIBRATION_WINDOW) {
      const drop = new Set(same.slice(0, same.length - CALIBRATION_WINDOW));
      this.db.data.calibration = all.filter((s) => !drop.has(s));
    }
  }

  /** The largest peak RSS of the last few runs of this graph at this worker count, or null when none was recorded. */
  calibratedPeak(graphName: string, workerCount: number): number | null {
    let peak: number | null = null;
    for (const s of this.db.data.calibration) {
      if (s.graphName === graphName && s.workerCount === workerCount) peak = Math.max(peak ?? 0, s.peakRssMb);
    }
    return peak;
  }

  /** The largest GPU memory peak of those runs, or null when none had one measured. */
  calibratedVramPeak(graphName: string, workerCount: number): number | null {
    let peak: number | null = null;
    for (const s of this.db.data.calibration) {
      if (s.graphName === graphName && s.workerCount === workerCount && typeof s.peakVramMb === 'number')
        peak = Math.max(peak ?? 0, s.peakVramMb);
    }
    return peak;
  }

  /** The largest average CPU cores of those runs, or null when none had its CPU measured. */
  calibratedCores(graphName: string, workerCount: number): number | null {
    let peak: number | null = null;
    for (const s of this.db.data.calibration) {
      if (s.graphName === graphName && s.workerCount === workerCount && typeof s.cpuCores === 'number')
        peak = Math.max(peak ?? 0, s.cpuCores);
    }
    return peak;
  }

  calibrationSamples(): readonly CalibrationSample[] {
    return this.db.data.calibration;
  }

  settings(): Readonly<Record<string, unknown>> {
    return this.db.data.settings;
  }

  updateSettings(patch: Record<string, unknown>): void {
    this.db.data.settings = { ...this.db.data.settings, ...patch };
    this.schedule();
  }

  /** One write in flight; changes made meanwhile are written together by the next one. */
  private schedule(): void {
    if (this.closed) return;
    this.dirty = true;
    if (!this.writing) this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      // Let the current burst of synchronous updates land in one write.
      await new Promise<void>((r) => setImmediate(r));
      while (this.dirty) {
        this.dirty = false;
        try {
          await this.db.write();
          if (this.writeFailed) this.logger?.info(`catalog: ${this.path} is written again`);
          this.writeFailed = false;
        } catch (err) {
          // The index in memory stays right; the next sync writes it again.
          if (!this.writeFailed)
            this.logger?.warn(`catalog: could not write ${this.path}: ${err instanceof Error ? err.message : String(err)}`);
          this.writeFailed = true;
        }
      }
    } finally {
      this.writing = null;
    }
  }

  /** Resolves when every change made so far is on disk. */
  async flush(): Promise<void> {
    if (!this.writing && !this.dirty) return;
    if (!this.writing) this.writing = this.drain();
    while (this.writing) await this.writing;
  }

  /** Flushes and stops writing. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
  }
}

function emptyRun(id: string): CatalogRun {
  return {
    id,
    graphName: '',
    status: 'QUEUED',
    priority: 0,
    createdAt: new Date(0).toISOString(),
    startedAt: null,
    finishedAt: null,
    episodeCount: 0,
    episodesDone: 0,
    workerCount: RUN_DEFAULTS.workerCount,
    statusCounts: {},
    aggregateMetrics: [],
    error: null,
    pid: null,
    viaSubprocess: true,
  };
}

/** Reads a run dir's process.json, or null. */
export async function readProcessRecord(runDir: string): Promise<ProcessRecord | null> {
  try {
    return JSON.parse(await readFile(join(runDir, FILES.process), 'utf8')) as ProcessRecord;
  } catch {
    return null;
  }
}
