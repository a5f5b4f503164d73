/**
 * Writes a finished run directory straight to disk, as the eval process would leave it, so a
 * test can show the dashboard a large run without executing it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EpisodeStatus } from '../../src/statuses.js';
import { FILES, runsRoot } from '../../src/store/run-dir.js';
import type { EpisodeRecord, MetricAggregate, RunSpec, RunSummary } from '../../src/store/types.js';
import { runSpecSchema } from '../../src/spec/run-spec.js';

function aggregate(name: string, values: number[]): MetricAggregate {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1) : 0;
  return { name, mean, count: n, stderr: Math.sqrt(variance / n), min: Math.min(...values), max: Math.max(...values) };
}

/**
 * A COMPLETED gridnav-like run of `episodeCount` episodes over `workerCount` workers; returns its id.
 * With `cancelled`, the run was CANCELLED and that many of its last episodes ended CANCELLED.
 */
export async function writeSyntheticRun(
  outputsDir: string,
  opts: { runId: string; episodeCount: number; workerCount: number; cancelled?: number },
): Promise<string> {
  const { runId, episodeCount, workerCount, cancelled = 0 } = opts;
  const dir = join(runsRoot(outputsDir), runId);
  await mkdir(join(dir, FILES.episodes), { recursive: true });
  const t0 = Date.parse('2026-01-01T12:00:00.000Z');
  const endings: EpisodeStatus[] = [
    'COMPLETED',
    'COMPLETED',
    'COMPLETED',
    'BUDGET_EXHAUSTED',
    'COMPLETED',
    'TIMEOUT',
    'COMPLETED',
    'ERROR',
  ];
  const perWorker = Math.ceil(episodeCount / workerCount);
  const clock = new Array<number>(workerCount).fill(t0);
  const episodes: EpisodeRecord[] = [];
  for (let i = 0; i < episodeCount; i++) {
    const workerId = Math.floor(i / perWorker);
    const status = i >= episodeCount - cancelled ? 'CANCELLED' : endings[(i * 7) % endings.length]!;
    const durationMs = 200 + ((i * 37) % 900);
    const start = clock[workerId]!;
    clock[workerId] = start + durationMs + 5;
    const success = status === 'COMPLETED' ? 1 : 0;
    const distance = status === 'COMPLETED' ? 0 : 1 + ((i * 13) % 9);
    episodes.push({
      index: i,
      episodeId: `gridnav/val/${i}`,
      status,
      steps: 10 + ((i * 11) % 60),
      metrics: { success, spl: success * (0.5 + ((i * 17) % 50) / 100), distance_to_goal: distance, steps: 10 + ((i * 11) % 60) },
      seed: (i * 2654435761) % 4294967296,
      workerId,
      durationMs,
      startedAt: new Date(start).toISOString(),
      finishedAt: new Date(start + durationMs).toISOString(),
      task: i % 3 === 0 ? 'small' : 'large',
      scene: `maze-${i}`,
      instruction: 'go to the goal',
      stepBudget: 100,
      assets: [],
      ...(status === 'ERROR' ? { error: 'node "agent" failed: synthetic' } : {}),
    });
  }
  const metricNames = ['distance_to_goal', 'spl', 'steps', 'success'];
  const aggs = (eps: EpisodeRecord[]) =>
    metricNames.map((m) =>
      aggregate(
        m,
        eps.map((e) => e.metrics[m] as number),
      ),
    );
  const statusCounts: Partial<Record<EpisodeStatus, number>> = {};
  for (const e of episodes) statusCounts[e.status] = (statusCounts[e.status] ?? 0) + 1;
  const createdAt = new Date(t0 - 1000).toISOString();
  const finishedAt = new Date(Math.max(...clock)).toISOString();
  const spec: RunSpec = runSpecSchema.parse({ runId, graphName: 'gridnav_planner', episodeCount, workerCount, createdAt });
  const summary: RunSummary = {
    seq: episodeCount + 1,
    runId,
    status: cancelled > 0 ? 'CANCELLED' : 'COMPLETED',
    graphName: 'gridnav_planner',
    episodeCount,
    workerCount,
    seed: 0,
    priority: 0,
    episodesDone: episodeCount,
    createdAt,
    startedAt: new Date(t0).toISOString(),
    finishedAt,
    error: null,
    aggregateMetrics: aggs(episodes),
    aggregateByTask: { large: aggs(episodes.filter((e) => e.task === 'large')), small: aggs(episodes.filter((e) => e.task === 'small')) },
    statusCounts,
    timedOut: true,
    episodes,
  };
  await writeFile(join(dir, FILES.spec), JSON.stringify(spec, null, 2));
  await writeFile(join(dir, FILES.summary), JSON.stringify(summary));
  await writeFile(join(dir, FILES.done), finishedAt + '\n');
  return runId;
}
