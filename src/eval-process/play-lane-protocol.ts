/** What the main thread and a play lane (play-lane-main.ts) pass each other. */
import type { GraphSpec } from '../core/types.js';
import type { NodesetEntry } from '../nodeset-registry/registry.js';
import type { EpisodeRecord, RunSpec, SharedUrls } from '../store/types.js';

/** A lane's `workerData`. */
export interface PlayLaneData {
  runDir: string;
  spec: RunSpec;
  /** The run's frozen graph. */
  graph: GraphSpec;
  /** This lane's workers: `firstWorkerId` … `firstWorkerId + workerCount - 1`. */
  firstWorkerId: number;
  workerCount: number;
  /** Workers in every lane together. */
  runWorkerCount: number;
  /** Episodes in flight across the run (run-concurrency.ts), split over every lane's workers. */
  maxInFlight: number;
  /** The shared position in the hand-out order (which comes with `go`). */
  cursor: SharedArrayBuffer;
  /**
   * One Int32 per lane, LANE_IDLE until either the lane claims it (LANE_PLAYING, before it takes
   * its first episode) or the main thread does (LANE_DROPPED: the work ran out before the lane
   * was up; it plays nothing and may be ended at once). Whoever swaps first decides.
   */
  claims: SharedArrayBuffer;
  /** This lane's number (its slot in `claims` and `beats`). */
  lane: number;
  /**
   * One Int32 per lane that the lane's thread adds 1 to every LANE_BEAT_MS while its event loop
   * turns: the main thread ends a lane whose count stands still past the run's per-call limit.
   */
  beats: SharedArrayBuffer;
  /**
   * Set on a lane started again after its thread was ended: it has its claim already and plays
   * this order at once (no `go`, no `start`).
   */
  resumeOrder?: number | readonly number[];
  cores: number;
  /** Shared nodesets the server lends the run (name → URL), and the secrets their hosts ask for (URL → secret; memory only). */
  lent: SharedUrls;
  secrets: Record<string, string>;
  /** The model keys, for a model host served inline in the lane (EVAL_IN_PROCESS_HOSTS); memory only. */
  modelKeys: Record<string, string>;
  env?: Record<string, string>;
  /** The nodesets the main thread scanned for the run (built-in and workspace): a lane's registry is made of them, not scanned again. */
  nodesets: NodesetEntry[];
  /** With tracing on: the run span (a W3C traceparent) this lane's episode spans go under. */
  traceparent?: string;
  /** Once claimed, post `claimed` and wait for `start` before playing (every lane starts at once). */
  together: boolean;
  /** Send `written` as each episode's folder is complete (the run has an onEpisodeWritten). */
  reportWritten: boolean;
  /** Send `played` as each episode's record is built, before its files are written (a stopWhen run decides on it). */
  reportPlayed?: boolean;
}

/** How often a lane's thread counts its beat. */
export const LANE_BEAT_MS = 100;

export const LANE_IDLE = 0;
export const LANE_PLAYING = 1;
export const LANE_DROPPED = 2;

/**
 * Main → lane. `go`: play, taking from the shared cursor over this hand-out order. `stop`: stop
 * dispatch (before go: play nothing); in-flight episodes end CANCELLED, with the run's stop reason.
 * `moved`: a lent shared host now answers elsewhere.
 */
export type LaneRequest =
  | { type: 'go'; order: number | readonly number[] }
  /** With `together`: every lane is up, play. */
  | { type: 'start' }
  | { type: 'stop'; code: string | null; message: string }
  /** A lent shared host was restarted at `url`. */
  | { type: 'moved'; nodeset: string; url: string; secret?: string };

/** Lane → main. */
export type LaneMessage =
  | { type: 'start'; index: number; workerId: number }
  | { type: 'written'; record: EpisodeRecord }
  | { type: 'episode'; record: EpisodeRecord }
  | { type: 'played'; record: EpisodeRecord }
  | { type: 'retire'; workerId: number; reason: string }
  | { type: 'log'; line: string }
  /** With `together`: this lane has claimed itself and waits for `start`. */
  | { type: 'claimed' }
  | { type: 'done' }
  /** `stopped`: the lane had been told to stop when it failed (a failure of the stop, not of the run). */
  | { type: 'failed'; code: string | null; message: string; stopped: boolean };
