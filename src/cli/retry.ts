/**
 * `evalctl retry <run> [--endings E,…] [--server URL [--token T]] [--outputs DIR] [--json]`:
 * plays again, as a new attempt of the same run, its episodes that ended in the endings
 * (default CRASHED, TIMEOUT, ERROR, INFRA_ERROR, CANCELLED) and those that never ran
 * (docs/retry.md). With `--server` the server queues it (retryRun) and it is followed there;
 * without, it runs here, on the run directory under `--outputs` (no server may be running it).
 */
import { BadInputError, ConflictError } from '../errors.js';
import { runExitCode } from './run-exit-code.js';
import { runBatch } from '../eval-process/run-batch.js';
import { DEFAULT_OUTPUTS_DIR } from '../paths.js';
import { prepareRetry, restoreUnplayed, retryEndingsOf, type RetriedEpisode } from '../store/attempts.js';
import { isDone, readSpec, readSummary, touchDone, writeSummary } from '../store/run-dir.js';
import { inspectRunGraph } from '../scheduler/run-graph.js';
import { assertRetryModels } from '../scheduler/retry-models.js';
import { isTerminalRunStatus } from '../statuses.js';
import { isPidAlive } from '../scheduler/admission/resource-sampler.js';
import type { RunSummary } from '../store/types.js';
import { parseCommandArgs } from './args.js';
import { RemoteServer } from './remote-run.js';
import { runDirOf } from './run-dir-arg.js';
import { followRemoteRun, renderSummary } from './run.js';
import { signalExitCode } from './signal-exit.js';

const USAGE =
  'usage: evalctl retry <run-id | run-dir> [--endings CRASHED,TIMEOUT,ERROR,INFRA_ERROR,CANCELLED] [--outputs DIR] [--server URL [--token T]] [--json]';

const RETRY = `mutation Retry($id: ID!, $endings: [EpisodeStatus!]) {
  retryRun(id: $id, endings: $endings) { runId attempt retried { index ending attempt } }
}`;

function describe(runId: string, attempt: number, retried: readonly RetriedEpisode[]): string {
  const counts = new Map<string, number>();
  for (const r of retried) counts.set(r.ending ?? 'never ran', (counts.get(r.ending ?? 'never ran') ?? 0) + 1);
  const why = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  return `run ${runId}: attempt ${attempt} plays ${retried.length} episode(s) again (${why})\n`;
}

/**
 * A run without _DONE whose recorded process is gone (an `evalctl retry` or eval process killed
 * with SIGKILL, which could write nothing) is ended ABORTED here, its finished episodes kept, so
 * it can be retried; one whose process still runs is refused.
 */
async function endOrphaned(dir: string): Promise<void> {
  const summary = await readSummary(dir).catch(() => null);
  const pid = summary?.pid;
  if (!summary || isTerminalRunStatus(summary.status) || typeof pid !== 'number' || pid === process.pid || isPidAlive(pid))
    throw new ConflictError(
      `run ${dir} is not finished (no _DONE${typeof pid === 'number' ? `; its process ${pid} is still running` : ''}); retry it once it has ended`,
    );
  // A retry killed part-way: the earlier records of what it did not play come back.
  const ended = (await restoreUnplayed(dir, summary)) ?? summary;
  const { pid: _gone, ...rest } = ended;
  const message = `its process (pid ${pid}) is gone without finishing the run (killed)`;
  await writeSummary(dir, {
    ...rest,
    seq: summary.seq + 1,
    status: 'ABORTED',
    error: { code: 'ABORTED', message },
    finishedAt: new Date().toISOString(),
  });
  await touchDone(dir);
  process.stderr.write(`run ${summary.runId}: ${message}; marked ABORTED, its ${ended.episodesDone} finished episode(s) kept\n`);
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    argv,
    {
      endings: { type: 'string' },
      outputs: { type: 'string' },
      server: { type: 'string' },
      token: { type: 'string' },
    },
    USAGE,
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new BadInputError(`give one run (its id or its directory); ${USAGE}`);
  const endings = retryEndingsOf(values.endings?.split(',').filter((e) => e.trim() !== ''));
  const json = values.json === true;
  let summary: RunSummary;
  let where: string;
  if (values.server !== undefined) {
    const runId = positionals[0] ?? '';
    const server = new RemoteServer({ server: values.server, token: values.token ?? (process.env.EVAL_API_TOKEN || undefined) });
    const data = await server.gql<{ retryRun: { runId: string; attempt: number; retried: RetriedEpisode[] } }>(RETRY, {
      id: runId,
      endings: values.endings === undefined ? null : endings,
    });
    process.stderr.write(describe(runId, data.retryRun.attempt, data.retryRun.retried));
    const interrupted = await followRemoteRun(server, runId, { json, command: 'evalctl retry', what: 'the attempt' });
    if (interrupted) {
      summary = await server.summary(runId);
      process.stdout.write(json ? JSON.stringify(summary, null, 2) + '\n' : renderSummary(summary, `${server.base}/runs/${runId}`));
      return signalExitCode(interrupted);
    }
    summary = await server.summary(runId);
    where = `${server.base}/runs/${runId}/export.tar.gz (on the server)`;
  } else {
    const dir = runDirOf(positionals[0], values.outputs ?? DEFAULT_OUTPUTS_DIR, USAGE);
    if (!isDone(dir)) await endOrphaned(dir);
    const spec = await readSpec(dir);
    const info = await inspectRunGraph({
      graphName: spec.graphName,
      overrides: spec.overrides,
      frozen: spec.graph,
      workspaceDir: spec.activeWorkspaceDir ?? (process.env.ACTIVE_WORKSPACE_DIR || undefined),
    });
    await assertRetryModels(dir, spec, info);
    const prepared = await prepareRetry(dir, endings);
    process.stderr.write(describe(prepared.spec.runId, prepared.attempt, prepared.retried));
    const controller = new AbortController();
    let interrupted: NodeJS.Signals | null = null;
    const stop = (signal: NodeJS.Signals) => {
      interrupted ??= signal;
      controller.abort(new Error(`cancelled (${signal})`));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      // Hosts of its own, as `evalctl run` has: shared_urls.json names a server's shared hosts, which
      // answer only that server's eval processes (and may be gone with it).
      summary = await runBatch({ runDir: dir, signal: controller.signal, sharedUrls: {} });
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    // As documented and as `evalctl run`: 130 after Ctrl-C, 143 after SIGTERM, whatever the attempt's ending.
    if (interrupted) {
      process.stdout.write(json ? JSON.stringify(summary, null, 2) + '\n' : renderSummary(summary, dir));
      return signalExitCode(interrupted);
    }
    where = dir;
  }
  process.stdout.write(json ? JSON.stringify(summary, null, 2) + '\n' : renderSummary(summary, where));
  if (summary.status === 'COMPLETED') return 0;
  if (summary.error) process.stderr.write(`evalctl retry: run ${summary.runId} ${summary.status}: ${summary.error.message}\n`);
  return runExitCode(summary);
}
