/**
 * What a scale-out worker and the head say to each other over HTTP (`/scaleout/…`, the
 * server's token in `Authorization: Bearer`), and the Redis names both use. The head is the
 * ledger: an episode counts once its record is committed there, never from a progress event.
 */
import type { RunSpec } from '../store/types.js';

/** Redis pub/sub channel on which the head names a cancelled run; every worker listens. */
export const CANCEL_CHANNEL = 'evalctl:cancel';

/** Paths of the head's scale-out routes. */
export const SCALEOUT_ROUTES = {
  claim: '/scaleout/claim',
  commit: '/scaleout/commit',
  shardEnd: '/scaleout/shard-end',
  heartbeat: '/scaleout/heartbeat',
} as const;

/** A worker asks to play a shard. */
export interface ClaimRequest {
  runId: string;
  shard: number;
  worker: string;
  /** Only look (the spec and what is committed): the worker checks the shard fits before it takes it. */
  probe?: boolean;
}

/** `play`: the spec and the shard's indices already committed (skipped); `skip`: the run is over, drop the shard. */
export type ClaimAnswer = { action: 'play'; spec: RunSpec; committed: number[] } | { action: 'skip'; reason: string };

/** One finished episode: its folder, file by file (relative paths, base64), episode.json among them. */
export interface CommitRequest {
  runId: string;
  shard: number;
  worker: string;
  index: number;
  files: { path: string; data: string }[];
}

/** `committed: false` when the index was committed before (first commit wins): the copy is dropped. */
export interface CommitAnswer {
  committed: boolean;
}

/** A shard's eval process ended: COMPLETED (all its episodes committed), or how it failed. */
export interface ShardEndRequest {
  runId: string;
  shard: number;
  worker: string;
  status: string;
  error?: { code: string; message: string } | null;
}

/** What a worker reports about itself every heartbeat. */
export interface WorkerHeartbeat {
  worker: string;
  machine: string;
  slots: number;
  /** Free resources as its sampler measured them (null: not measurable there). */
  ramFreeMb: number | null;
  vramFreeMb: number | null;
  cores: number;
  shards: { runId: string; shard: number }[];
}
