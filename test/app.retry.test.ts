/**
 * Exact retry and resume (docs/retry.md), with faults from outside the spec: env hosts killed
 * (CRASHED) and frozen (TIMEOUT) under a real server, and the server itself SIGKILLed mid-run
 * and started again on the same outputs. The retry plays exactly the failed and missing
 * episodes; the final records and aggregates equal a run in which nothing failed.
 */
import { IN_PROCESS_ENV } from '../src/eval-process/in-process-host.js';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../src/paths.js';
import type { AttemptsFile } from '../src/store/attempts.js';
import { readSummary, runDirPath } from '../src/store/run-dir.js';
import type { RunSummary } from '../src/store/types.js';
import { resultBytes } from './eval-process/run-helpers.js';
import { crashingRun } from './support/crashing-run.js';
import { alive, gql, sseCollect, START_EVAL, startServer, urlFrom, waitFor, type TestServer } from './app.helpers.js';

const MAIN = join(DIST_DIR, 'main.js');
/** Cheap steps (mini grids, 1 ms per env step) with a per-call limit of 1 s, so a frozen host times out fast. */
const INPUT = {
  graphName: 'gridnav_planner',
  episodeCount: 100,
  workerCount: 2,
  seed: 7,
  dataset: 'mini',
  overrides: { env: { step_latency_ms: 1 } },
  perCallTimeoutSec: 1,
};
const RETRY = `mutation Retry($id: ID!, $endings: [EpisodeStatus!]) {
  retryRun(id: $id, endings: $endings) { runId status attempt retried { index ending attempt } run { attempt } }
}`;

let server: TestServer;
let clean: RunSummary;
const stopped: number[] = [];

/** Pids of the env_gridnav hosts the eval process `evalPid` started (its children), from /proc. */
/** Inodes of the sockets listening on this machine (TCP and Unix), from /proc/net. */
function listeningInodes(): Set<string> {
  const out = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A') out.add(f[9]!);
    }
  }
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] === '00010000') out.add(f[6]!);
  }
  return out;
}

/**
 * The eval process's env hosts that listen already (a host still starting is never a victim:
 * killing it would be a failed start, not a crash), oldest first.
 */
function envHostsOf(evalPid: number): number[] {
  const found: Array<{ pid: number; start: number }> = [];
  const listening = listeningInodes();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== evalPid) continue;
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('env_gridnav')) continue;
      const sockets = readdirSync(`/proc/${name}/fd`).map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${name}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      });
      if (sockets.some((inode) => inode !== undefined && listening.has(inode)))
        found.push({ pid: Number(name), start: Number(fields[19]) });
    } catch {
      // gone meanwhile
    }
  }
  return found.sort((a, b) => a.start - b.start || a.pid - b.pid).map((h) => h.pid);
}

const summaryOf = (outputs: string, runId: string) => readSummary(runDirPath(outputs, runId)).catch(() => null);

async function startAndWait(url: string, outputs: string): Promise<RunSummary> {
  const res = await gql<{ startEval: { runId: string } }>(url, START_EVAL, { input: INPUT });
  expect(res.errors).toBeUndefined();
  const runId = res.data!.startEval.runId;
  return waitFor(
    `run ${runId} to finish`,
    async () => {
      // _DONE first: the summary read after it is the final one.
      if (!existsSync(join(runDirPath(outputs, runId), '_DONE'))) return undefined;
      return (await summaryOf(outputs, runId)) ?? undefined;
    },
    120_000,
    200,
  );
}

/** Waits for the retry to finish; checks what every retried run must show. */
async function checkRetried(outputs: string, runId: string, before: RunSummary, retried: number[]) {
  const dir = runDirPath(outputs, runId);
  const after = await waitFor(
    `retry of ${runId}`,
    async () => {
      // Attempt 2 asked for (also in the background, by serve --resume), then _DONE, then its final summary.
      const asked = existsSync(join(dir, 'attempts.json'))
        ? (JSON.parse(readFileSync(join(dir, 'attempts.json'), 'utf8')) as AttemptsFile).attempts[1]?.requestedAt
        : undefined;
      if (!asked || !existsSync(join(dir, '_DONE'))) return undefined;
      const s = await summaryOf(outputs, runId);
      return s?.finishedAt && s.finishedAt > asked ? s : undefined;
    },
    120_000,
    200,
  );
  expect(after.status).toBe('COMPLETED');
  // Byte-identical to the run in which nothing failed (timing and worker fields aside).
  expect(resultBytes(after)).toBe(resultBytes(clean));
  // Both attempts kept: attempt 1's records of the retried episodes under attempts/1/.
  const attempts = JSON.parse(await readFile(join(dir, 'attempts.json'), 'utf8')) as AttemptsFile;
  expect(attempts.attempts.map((a) => a.attempt)).toEqual([1, 2]);
  expect(attempts.attempts[1]!.indices).toEqual(retried);
  const earlier = await readSummary(join(dir, 'attempts', '1'));
  expect(earlier.episodes).toEqual(before.episodes);
  for (const i of retried) {
    const ep = `ep${String(i).padStart(4, '0')}`;
    const old = before.episodes.find((r) => r.index === i);
    if (old) expect(JSON.parse(await readFile(join(dir, 'attempts', '1', 'episodes', ep, 'episode.json'), 'utf8'))).toEqual(old);
    expect(JSON.parse(await readFile(join(dir, 'episodes', ep, 'episode.json'), 'utf8'))).toEqual(
      after.episodes.find((r) => r.index === i),
    );
  }
  // The report lists the retried episodes with their earlier ending and the attempt.
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as {
    attempt: number;
    retriedEpisodes: Array<{ index: number; attempt: number; status: string; earlier: Array<{ attempt: number; ending: string | null }> }>;
  };
  expect(report.attempt).toBe(2);
  expect(report.retriedEpisodes.map((e) => e.index)).toEqual(retried);
  for (const e of report.retriedEpisodes) {
    expect(e).toMatchObject({ attempt: 2, status: 'COMPLETED' });
    expect(e.earlier).toEqual([{ attempt: 1, ending: before.episodes.find((r) => r.index === e.index)?.status ?? null }]);
  }
  return after;
}

beforeAll(async () => {
  // The env hosts this test kills and freezes must be processes of their own (a thread host shares the eval process's pid).
  process.env[IN_PROCESS_ENV] = '0';
  server = await startServer({ scheduler: { cores: 64 } });
  clean = await startAndWait(server.url, join(server.dir, 'outputs'));
  expect(clean.statusCounts).toEqual({ COMPLETED: 100 });
}, 180_000);

afterAll(async () => {
  for (const pid of stopped) {
    if (!alive(pid)) continue;
    process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGKILL');
  }
  await server?.stop();
});

describe('retry', () => {
  it('hosts killed and frozen mid-run: retryRun plays exactly the CRASHED and TIMEOUT episodes; the result equals a clean run', async () => {
    const outputs = join(server.dir, 'outputs');
    const res = await gql<{ startEval: { runId: string } }>(server.url, START_EVAL, { input: INPUT });
    const runId = res.data!.startEval.runId;
    const statusesOf = (s: RunSummary | null) => new Set(s?.episodes.map((r) => r.status));
    const running = await waitFor(
      '10 episodes',
      async () => {
        const s = await summaryOf(outputs, runId);
        return s?.pid && s.episodesDone >= 10 && envHostsOf(s.pid).length === 2 ? s : undefined;
      },
      90_000,
    );
    const evalPid = running.pid!;
    // A killed host: the episode in flight on it ends CRASHED (again, if the worker was between episodes).
    for (let i = 0; i < 5 && !statusesOf(await summaryOf(outputs, runId)).has('CRASHED'); i++) {
      const victim = await waitFor('two listening env hosts', async () => {
        const hosts = envHostsOf(evalPid);
        return hosts.length === 2 ? hosts[0] : undefined;
      });
      process.kill(victim!, 'SIGKILL');
      await waitFor(
        'a crash or a new host',
        async () => {
          const s = await summaryOf(outputs, runId);
          return statusesOf(s).has('CRASHED') || (!envHostsOf(evalPid).includes(victim!) && envHostsOf(evalPid).length === 2);
        },
        60_000,
      );
    }
    // A frozen host: its call goes unanswered past the per-call limit, TIMEOUT.
    const frozen = await waitFor('two listening env hosts', async () => {
      const hosts = envHostsOf(evalPid);
      return hosts.length === 2 ? hosts[0] : undefined;
    });
    process.kill(frozen, 'SIGSTOP');
    stopped.push(frozen);
    const before = await waitFor(
      'the faulty run to finish',
      async () => {
        const s = await summaryOf(outputs, runId);
        return s?.status === 'COMPLETED' && existsSync(join(runDirPath(outputs, runId), '_DONE')) ? s : undefined;
      },
      120_000,
      200,
    );
    const failed = before.episodes.filter((r) => r.status !== 'COMPLETED');
    expect(before.statusCounts.CRASHED).toBeGreaterThanOrEqual(1);
    expect(before.statusCounts.TIMEOUT).toBeGreaterThanOrEqual(1);
    expect(failed.every((r) => r.status === 'CRASHED' || r.status === 'TIMEOUT')).toBe(true);

    const retry = await server.gql<{
      retryRun: {
        status: string;
        attempt: number;
        retried: Array<{ index: number; ending: string; attempt: number }>;
        run: { attempt: number };
      };
    }>(RETRY, { id: runId });
    expect(retry.errors).toBeUndefined();
    const progress = sseCollect<{ runProgress: { status: string } }>(
      server.url,
      'subscription P($id: ID!) { runProgress(id: $id) { status } }',
      {
        id: runId,
      },
    );
    const r = retry.data!.retryRun;
    expect(r).toMatchObject({ status: 'QUEUED', attempt: 2, run: { attempt: 2 } });
    // Exactly the failed episodes, counted, with their endings.
    expect(r.retried).toEqual(failed.map((e) => ({ index: e.index, ending: e.status, attempt: 1 })));
    const after = await checkRetried(
      outputs,
      runId,
      before,
      failed.map((e) => e.index),
    );
    // The subscription followed the attempt: it saw the run running again, then its end.
    const states = (await progress).events.map((e) => e.data!.runProgress.status);
    expect(states).toContain('RUNNING');
    expect(states.at(-1)).toBe('COMPLETED');
    // The API's report says the same as report.json.
    const report = await server.gql<{ run: { report: { retriedEpisodes: Array<{ index: number }> } } }>(
      'query R($id: ID!) { run(id: $id) { report } }',
      { id: runId },
    );
    expect(report.data!.run.report.retriedEpisodes.map((e) => e.index)).toEqual(failed.map((e) => e.index));
    expect(after.episodesDone).toBe(100);
    // Nothing finished is played twice.
    const again = await server.gql(RETRY, { id: runId });
    expect(again.errors?.[0]?.extensions?.code).toBe('NOTHING_TO_RETRY');
  }, 240_000);

  /** `evalctl serve` on `outputs`, its output kept in `log`. */
  const serveOn =
    (outputs: string, log: { text: string } = { text: '' }) =>
    (...extra: string[]): ResultPromise => {
      const child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs, '--cores', '64', ...extra], {
        reject: false,
        forceKillAfterDelay: false,
        env: { EVAL_API_TOKEN: '' },
      });
      for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (b: Buffer) => (log.text += b.toString()));
      return child;
    };

  /** Starts INPUT on `child`, SIGKILLs the server once `episodes` are recorded, and waits for the run to end ABORTED. */
  async function killedMidRun(child: ResultPromise, outputs: string, episodes: number): Promise<{ runId: string; before: RunSummary }> {
    const url = await urlFrom(child);
    const res = await gql<{ startEval: { runId: string } }>(url, START_EVAL, { input: INPUT });
    const runId = res.data!.startEval.runId;
    const mid = await waitFor(
      `${episodes} episodes`,
      async () => {
        const s = await summaryOf(outputs, runId);
        return s?.pid && s.episodesDone >= episodes ? s : undefined;
      },
      90_000,
      100,
    );
    child.kill('SIGKILL');
    await child;
    // Its eval process sees its parent go and stops (or dies with it): the run is ABORTED.
    await waitFor('the eval process to end', () => !alive(mid.pid!), 30_000);
    const before = (await summaryOf(outputs, runId))!;
    expect(before.status).toBe('ABORTED');
    expect(before.episodesDone).toBeLessThan(100);
    return { runId, before };
  }

  it('a server SIGKILLed mid-run and started again with --resume: only the episodes not yet recorded run again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retry-serve-'));
    const outputs = join(dir, 'outputs');
    const serve = serveOn(outputs);
    let child = serve();
    try {
      const { runId, before } = await killedMidRun(child, outputs, 60);
      const byIndex = new Map(before.episodes.map((r) => [r.index, r]));
      const expected = Array.from({ length: 100 }, (_, i) => i).filter((i) => byIndex.get(i)?.status !== 'COMPLETED');
      child = serve('--resume');
      const url2 = await urlFrom(child);
      await checkRetried(outputs, runId, before, expected);
      // `evalctl retry` against the server: nothing is left to play.
      const cli = await execa('node', [MAIN, 'retry', runId, '--server', url2], { reject: false, env: { EVAL_API_TOKEN: '' } });
      expect(cli.exitCode).not.toBe(0);
      expect(cli.stderr).toContain('nothing to retry');
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await child;
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('a run a server started without --resume left ABORTED is not resumed by a later --resume', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retry-declined-'));
    const outputs = join(dir, 'outputs');
    const log = { text: '' };
    const serve = serveOn(outputs, log);
    let child = serve();
    try {
      const { runId, before } = await killedMidRun(child, outputs, 10);
      // Restarted without --resume: the run stays as it ended, and the server notes that it left it so.
      child = serve();
      await urlFrom(child);
      await waitFor('the run noted as left standing', async () => {
        const text = await readFile(join(outputs, '.resume-declined.json'), 'utf8').catch(() => '{}');
        return (JSON.parse(text) as Record<string, string>)[runId] === before.finishedAt;
      });
      child.kill('SIGTERM');
      await child;
      // The next server's --resume is about its predecessor's stop, which interrupted nothing.
      child = serve('--resume');
      await urlFrom(child);
      await waitFor('the resume pass to pass the run by', () => log.text.includes(`run ${runId}: not resumed`));
      const after = (await summaryOf(outputs, runId))!;
      expect(after).toMatchObject({ status: 'ABORTED', episodesDone: before.episodesDone, finishedAt: before.finishedAt });
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await child;
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('`evalctl retry` on a local run directory plays its CRASHED episodes again as attempt 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retry-local-'));
    const outputs = join(dir, 'outputs');
    try {
      const s1 = await crashingRun(outputs, 3, ['--seed', '7']);
      expect(s1.statusCounts).toEqual({ CRASHED: 3 });
      const again = await execa('node', [MAIN, 'retry', s1.runId, '--outputs', outputs, '--endings', 'crashed', '--json'], {
        reject: false,
      });
      expect(again.stderr).toContain('attempt 2 plays 3 episode(s) again (3 CRASHED)');
      const s2 = JSON.parse(again.stdout) as RunSummary;
      // A crash written into the graph is a result of the graph: the same again (but for the socket error's wording and the dead host's URL).
      const noError = (s: RunSummary) => resultBytes({ ...s, episodes: s.episodes.map(({ error: _e, ...r }) => r) });
      expect(noError(s2)).toBe(noError(s1));
      expect(existsSync(join(runDirPath(outputs, s1.runId), 'attempts', '1', 'episodes', 'ep0002', 'episode.json'))).toBe(true);
      const bad = await execa('node', [MAIN, 'retry', s1.runId, '--outputs', outputs, '--endings', 'COMPLETED'], { reject: false });
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain('never played again');

      // Left RUNNING by a process that was SIGKILLed (no _DONE): refused while that process lives, ended ABORTED and retried once it is gone.
      const runDir = runDirPath(outputs, s1.runId);
      const left = { ...(await readSummary(runDir)), status: 'RUNNING' as const, finishedAt: null };
      await rm(join(runDir, '_DONE'));
      await writeFile(join(runDir, 'summary.json'), JSON.stringify({ ...left, pid: process.pid }));
      const busy = await execa('node', [MAIN, 'retry', s1.runId, '--outputs', outputs], { reject: false });
      expect(busy.exitCode).toBe(1);
      expect(busy.stderr).toContain(`its process ${process.pid} is still running`);
      const ended = execa('node', ['-e', '']);
      const gone = { pid: ended.pid! };
      await ended;
      await writeFile(join(runDir, 'summary.json'), JSON.stringify({ ...left, pid: gone.pid }));
      const orphan = await execa('node', [MAIN, 'retry', s1.runId, '--outputs', outputs, '--endings', 'crashed', '--json'], {
        reject: false,
      });
      expect(orphan.stderr).toContain(`its process (pid ${gone.pid}) is gone without finishing the run (killed); marked ABORTED`);
      expect(orphan.stderr).toContain('attempt 3 plays 3 episode(s) again (3 CRASHED)');
      expect(noError(JSON.parse(orphan.stdout) as RunSummary)).toBe(noError(s1));
      const extra = await execa('node', [MAIN, 'retry', s1.runId, 'other', '--outputs', outputs], { reject: false });
      expect(extra.exitCode).toBe(2);
      expect(extra.stderr).toContain('give one run');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
