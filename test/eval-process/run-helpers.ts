/** Shared set-up for eval-process tests: run dirs with a spec, workspace graphs, process checks. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRunDir, writeSpec } from '../../src/store/run-dir.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';
import type { EpisodeRecord, RunSpec, RunSummary } from '../../src/store/types.js';
import type { GraphSpec } from '../../src/core/types.js';

/** Creates a run dir under `outputs` with a spec (defaults: 1 worker, seed 0, no overrides). */
export async function makeRun(
  outputs: string,
  spec: Partial<RunSpec> & Pick<RunSpec, 'graphName' | 'episodeCount'>,
  now?: Date,
): Promise<{ runId: string; dir: string; spec: RunSpec }> {
  const { runId, dir } = createRunDir(outputs, now);
  const full = runSpecSchema.parse({ runId, createdAt: new Date().toISOString(), ...spec });
  await writeSpec(dir, full);
  return { runId, dir, spec: full };
}

/** Writes `graphs/<name>.json` into a workspace overlay folder. */
export async function writeWorkspaceGraph(workspace: string, graph: GraphSpec): Promise<string> {
  await mkdir(join(workspace, 'graphs'), { recursive: true });
  const path = join(workspace, 'graphs', `${graph.name}.json`);
  await writeFile(path, JSON.stringify(graph, null, 2));
  return path;
}

/** env_gridnav driven by the shortest-path planner, metrics from the env; `extra` edges/nodes appended. */
export function gridnavGraph(
  name: string,
  opts: { envConfig?: Record<string, unknown>; stepBudget?: number; sink?: 'metrics' | 'image' } = {},
): GraphSpec {
  return {
    name,
    ...(opts.stepBudget !== undefined ? { step_budget: opts.stepBudget } : {}),
    nodes: [
      { id: 'env', type: 'env_gridnav__step', ...(opts.envConfig ? { config: opts.envConfig } : {}) },
      { id: 'agent', type: 'planner__act', config: { epsilon: 0.1 } },
      { id: 'result', type: 'graphOut' },
    ],
    edges: [
      { from: 'env.observation', to: 'agent.observation' },
      { from: 'agent.action', to: 'env.action', loop: true },
      opts.sink === 'image' ? { from: 'env.trajectory', to: 'result.image' } : { from: 'env.metrics', to: 'result.metrics' },
    ],
  };
}

/** The record without the fields allowed to differ between worker counts and machines. */
export function stripTiming(r: EpisodeRecord): Omit<EpisodeRecord, 'workerId' | 'durationMs' | 'startedAt' | 'finishedAt'> {
  const { workerId: _w, durationMs: _d, startedAt: _s, finishedAt: _f, ...rest } = r;
  return rest;
}

/** What must be byte-identical between worker counts: every record without timing, and the aggregates. */
export function resultBytes(s: RunSummary): string {
  return JSON.stringify({
    episodes: s.episodes.map(stripTiming),
    aggregateMetrics: s.aggregateMetrics,
    aggregateByTask: s.aggregateByTask,
    statusCounts: s.statusCounts,
    timedOut: s.timedOut,
    episodesDone: s.episodesDone,
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Polls until `check` holds or `timeoutMs` passes; returns whether it held. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 25): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
}

/** Host pids from the eval process's `hosts:` log line. */
export function hostPidsFromLog(log: string): number[] {
  const line = log.split('\n').find((l) => l.includes('] hosts: '));
  return line ? [...line.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])) : [];
}
