/**
 * The eval process as the scheduler and the CLI start it: `node dist/eval-process/main.js
 * --run-dir DIR`. Signals, parent death, host crashes, the frozen graph, and identity with
 * the in-process path.
 */
import { IN_PROCESS_ENV } from '../../src/eval-process/in-process-host.js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/eval-process/run-batch.js';
import { EVAL_PROCESS_MAIN, PACKAGE_ROOT } from '../../src/paths.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import { spawnHost } from '../../src/host/host-process.js';
import { FILES, isDone, readSummary, writeSharedUrls } from '../../src/store/run-dir.js';
import type { RunSummary } from '../../src/store/types.js';
import { gridnavGraph, hostPidsFromLog, isAlive, makeRun, resultBytes, waitFor, writeWorkspaceGraph } from './run-helpers.js';
import { hostSecretFor, hostSecretsEnv } from '../../src/host/host-secret.js';
import { spawnEvalProcess } from '../../src/scheduler/job/spawn-eval.js';

let tmp: string;
let workspace: string;
let outputs: string;
const children: ResultPromise[] = [];
const pids: number[] = [];

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'eval-main-'));
  workspace = join(tmp, 'ws');
  outputs = join(tmp, 'outputs');
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.pid && isAlive(c.pid)) c.kill('SIGKILL');
  for (const pid of pids.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(tmp, { recursive: true, force: true });
});

// This file follows host processes (their start, death and clean-up), so every host is one: none in a thread of the eval process.
process.env[IN_PROCESS_ENV] = '0';

/** Starts main.js like the scheduler does: stdin ignored, output to the run's logs. */
function startEvalProcess(dir: string): ResultPromise {
  const child = execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir, '--backend-url', 'http://127.0.0.1:9'], {
    stdin: 'ignore',
    stdout: { file: join(dir, FILES.stdout) },
    stderr: { file: join(dir, FILES.stderr) },
    reject: false,
    forceKillAfterDelay: false,
  });
  children.push(child);
  return child;
}

async function hostPids(dir: string): Promise<number[]> {
  let found: number[] = [];
  await waitFor(async () => {
    found = existsSync(join(dir, FILES.stdout)) ? hostPidsFromLog(await readFile(join(dir, FILES.stdout), 'utf8')) : [];
    return found.length > 0;
  }, 15_000);
  pids.push(...found);
  return found;
}

/** A live process's command line and kernel state, for a failure message. */
function processState(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
    const state = /^State:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return `pid ${pid} (${state ?? '?'}): ${cmd}`;
  } catch {
    return `pid ${pid} (gone)`;
  }
}

const slowGraph = () => gridnavGraph('slow', { envConfig: { step_latency_ms: 15 } });

describe('eval process', () => {
  it('a spare (--await-go) waits for go before it reads its spec, then plays; stopped while waiting it exits 0 and writes nothing', async () => {
    await writeWorkspaceGraph(workspace, gridnavGraph('quick'));
    const spare = async (dir: string) => {
      const messages: { type?: string }[] = [];
      const child = await spawnEvalProcess({
        evalProcessMain: EVAL_PROCESS_MAIN,
        runDir: dir,
        backendUrl: 'http://127.0.0.1:9',
        awaitGo: true,
        env: { EVAL_EPISODE_IPC: '1' },
        onMessage: (m) => messages.push(m as { type?: string }),
      });
      pids.push(child.pid);
      expect(await waitFor(() => messages.some((m) => m.type === 'waiting'), 15_000)).toBe(true);
      return { child, messages };
    };
    const played = await makeRun(outputs, { graphName: 'quick', episodeCount: 4, workerCount: 2, activeWorkspaceDir: workspace });
    const a = await spare(played.dir);
    expect(existsSync(join(played.dir, FILES.summary))).toBe(false);
    a.child.send({ type: 'go' });
    expect((await a.child.exited).exitCode).toBe(0);
    expect((await readSummary(played.dir)).status).toBe('COMPLETED');
    expect(a.messages.filter((m) => m.type === 'episodeDone')).toHaveLength(4);

    const idle = await makeRun(outputs, { graphName: 'quick', episodeCount: 4, activeWorkspaceDir: workspace });
    const b = await spare(idle.dir);
    process.kill(b.child.pid, 'SIGTERM');
    expect((await b.child.exited).exitCode).toBe(0);
    expect(existsSync(join(idle.dir, FILES.summary))).toBe(false);
    expect(isDone(idle.dir)).toBe(false);
  });

  it('SIGTERM cancels: in-flight episodes end CANCELLED, finished ones are kept, status CANCELLED, exit 0, no process left', async () => {
    await writeWorkspaceGraph(workspace, slowGraph());
    const { dir } = await makeRun(outputs, {
      graphName: 'slow',
      episodeCount: 20,
      workerCount: 2,
      dataset: 'mini',
      activeWorkspaceDir: workspace,
    });
    const child = startEvalProcess(dir);
    const hosts = await hostPids(dir);
    // Two env hosts and the planner (every host a process in this file).
    expect(hosts.length).toBe(3);
    expect(await waitFor(async () => existsSync(join(dir, FILES.summary)) && (await readSummary(dir)).episodesDone >= 2, 30_000)).toBe(
      true,
    );
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    child.kill('SIGTERM');
    const result = await child;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(result.exitCode).toBe(0);
    const summary = await readSummary(dir);
    expect(summary.status).toBe('CANCELLED');
    expect(isDone(dir)).toBe(true);
    const statuses = summary.episodes.map((e) => e.status);
    expect(statuses.filter((s) => s === 'COMPLETED').length).toBeGreaterThanOrEqual(2);
    expect(statuses).toContain('CANCELLED');
    expect(summary.episodesDone).toBeLessThan(20);
    // Each in-flight episode has its full record (its partial metrics: see the CANCELLED ending test).
    for (const e of summary.episodes.filter((x) => x.status === 'CANCELLED')) {
      expect(e.error).toBe('the run was cancelled');
      expect(existsSync(join(dir, 'episodes', `ep${String(e.index).padStart(4, '0')}`, 'episode.json'))).toBe(true);
    }
    for (const pid of hosts) expect(isAlive(pid)).toBe(false);
  });

  it('SIGKILL leaves no host behind within 4 s', async () => {
    await writeWorkspaceGraph(workspace, slowGraph());
    const { dir } = await makeRun(outputs, { graphName: 'slow', episodeCount: 20, workerCount: 3, activeWorkspaceDir: workspace });
    const child = startEvalProcess(dir);
    const hosts = await hostPids(dir);
    // Three env hosts and the planner.
    expect(hosts.length).toBe(4);
    child.kill('SIGKILL');
    await child;
    // Each host sees EOF on its stdin at once (or its ppid change within 500 ms); 4 s, as for a
    // SIGKILLed parent below, leaves room for a loaded machine. A host still alive is named with its state.
    const gone = await waitFor(() => hosts.every((pid) => !isAlive(pid)), 4000);
    expect(gone, hosts.filter(isAlive).map(processState).join('; ')).toBe(true);
    expect(isDone(dir)).toBe(false);
  });

  it('dies with its parent, even when the parent is SIGKILLed, and takes its hosts along', async () => {
    await writeWorkspaceGraph(workspace, slowGraph());
    const { dir } = await makeRun(outputs, { graphName: 'slow', episodeCount: 20, workerCount: 2, activeWorkspaceDir: workspace });
    const parent = execa(
      process.execPath,
      [join(PACKAGE_ROOT, 'test/fixtures/eval-parent.mjs'), EVAL_PROCESS_MAIN, dir, join(dir, FILES.stdout)],
      { reject: false, buffer: false },
    );
    children.push(parent);
    const evalPid = await new Promise<number>((resolve) =>
      parent.stdout!.on('data', (d: Buffer) => resolve(Number(/EVAL_PID (\d+)/.exec(String(d))?.[1]))),
    );
    pids.push(evalPid);
    const hosts = await hostPids(dir);
    parent.kill('SIGKILL');
    expect(await waitFor(() => !isAlive(evalPid) && hosts.every((pid) => !isAlive(pid)), 4000)).toBe(true);
    // Nobody cancelled it: the run says ABORTED and why, and is finished on disk.
    const summary = await readSummary(dir);
    expect(summary.status).toBe('ABORTED');
    expect(summary.error?.message).toMatch(/parent/);
    expect(isDone(dir)).toBe(true);
  });

  it('borrows shared hosts by URL without ever stopping them, and follows one that moved (IPC sharedHostMoved)', async () => {
    await writeWorkspaceGraph(workspace, slowGraph());
    const registry = await NodesetRegistry.scan();
    const planner = await spawnHost({ entry: registry.get('planner') });
    pids.push(planner.pid);
    const { dir } = await makeRun(outputs, { graphName: 'slow', episodeCount: 8, dataset: 'mini', activeWorkspaceDir: workspace });
    await writeSharedUrls(dir, { planner: planner.url });
    const child = execa(process.execPath, [EVAL_PROCESS_MAIN, '--run-dir', dir, '--backend-url', 'http://127.0.0.1:9'], {
      stdin: 'ignore',
      stdout: { file: join(dir, FILES.stdout) },
      stderr: { file: join(dir, FILES.stderr) },
      ipc: true,
      reject: false,
      // As the backend does: the secrets of the hosts it lends, in the environment.
      env: hostSecretsEnv([planner.url]),
    });
    children.push(child);
    // Our planner is the run's: the eval process starts no planner of its own.
    const hosts = await hostPids(dir);
    expect(hosts.length).toBe(1);
    expect(await waitFor(async () => existsSync(join(dir, FILES.summary)) && (await readSummary(dir)).episodesDone >= 1, 30_000)).toBe(
      true,
    );

    // The backend restarts a dead shared host on a new URL and tells the running eval process.
    const moved = await spawnHost({ entry: registry.get('planner') });
    pids.push(moved.pid);
    await planner.stop();
    await child.sendMessage({ type: 'sharedHostMoved', nodeset: 'planner', url: moved.url, secret: hostSecretFor(moved.url)! });
    const result = await child;
    expect(result.exitCode).toBe(0);
    const summary = await readSummary(dir);
    expect(summary.status).toBe('COMPLETED');
    expect(summary.episodes.at(-1)!.status).toBe('COMPLETED');
    expect(summary.statusCounts.COMPLETED).toBeGreaterThanOrEqual(2);
    expect(await readFile(join(dir, FILES.stdout), 'utf8')).toContain(`shared nodeset planner moved to ${moved.url}`);
    // Borrowed: still alive after the run.
    expect(moved.alive).toBe(true);
    await moved.stop();
  });

  it('a SIGKILLed env host crashes only its episode; the worker respawns it and the run completes the rest', async () => {
    await writeWorkspaceGraph(workspace, slowGraph());
    const { dir } = await makeRun(outputs, {
      graphName: 'slow',
      episodeCount: 6,
      workerCount: 2,
      dataset: 'mini',
      activeWorkspaceDir: workspace,
    });
    /** Each worker's first env host (the costliest episodes go first, so which worker plays episode 0 is not fixed). */
    const envHosts = new Map<string, number>();
    let killed = false;
    const summary = await runBatch({
      runDir: dir,
      onHostStarted: (h) => {
        pids.push(h.pid);
        if (h.nodeset === 'env_gridnav' && h.tag !== null && !envHosts.has(h.tag)) envHosts.set(h.tag, h.pid);
      },
      // Kill the env host of the worker playing episode 0 once it has run a few steps.
      onStep: (event, episode) => {
        const victim = envHosts.get(String(episode.workerId)) ?? 0;
        // victim 0 would signal this whole process group.
        if (episode.index !== 0 || event.step !== 3 || victim <= 0 || killed) return;
        process.kill(victim, 'SIGKILL');
        killed = true;
      },
    });
    expect(killed).toBe(true);
    expect(summary.status).toBe('COMPLETED');
    const [first, ...rest] = summary.episodes;
    expect(first!.status).toBe('CRASHED');
    expect(first!.steps).toBeGreaterThanOrEqual(4);
    expect(first!.metrics.steps).toBeGreaterThanOrEqual(3);
    expect(rest.map((e) => e.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect(summary.statusCounts).toEqual({ CRASHED: 1, COMPLETED: 5 });
  });

  it('freezes the graph at start: editing the source graph mid-run changes nothing', async () => {
    const source = slowGraph();
    const path = await writeWorkspaceGraph(workspace, source);
    const { dir } = await makeRun(outputs, {
      graphName: 'slow',
      episodeCount: 4,
      dataset: 'mini',
      activeWorkspaceDir: workspace,
      overrides: { agent: { epsilon: 0 } },
    });
    let edited = false;
    const summary = await runBatch({
      runDir: dir,
      onEpisodeStart: ({ index }) => {
        if (index !== 0) return;
        const broken = structuredClone(source);
        broken.nodes[1]!.type = 'planner__gone';
        void writeFile(path, JSON.stringify(broken)).then(() => (edited = true));
      },
      onHostStarted: (h) => pids.push(h.pid),
    });
    expect(edited).toBe(true);
    expect(summary.status).toBe('COMPLETED');
    expect(summary.statusCounts).toEqual({ COMPLETED: 4 });
    const frozen = JSON.parse(await readFile(join(dir, FILES.graph), 'utf8')) as typeof source;
    expect(frozen.nodes[1]).toEqual({ id: 'agent', type: 'planner__act', config: { epsilon: 0 } });
  });

  it('the subprocess path and the in-process path give identical results', async () => {
    await writeWorkspaceGraph(workspace, gridnavGraph('quick'));
    const spec = { graphName: 'quick', episodeCount: 6, workerCount: 2, seed: 7, activeWorkspaceDir: workspace };
    const a = await makeRun(outputs, spec);
    const b = await makeRun(outputs, spec);
    const child = startEvalProcess(a.dir);
    const inProcess = await runBatch({ runDir: b.dir, onHostStarted: (h) => pids.push(h.pid) });
    expect((await child).exitCode).toBe(0);
    const viaSubprocess: RunSummary = await readSummary(a.dir);
    expect(viaSubprocess.status).toBe('COMPLETED');
    expect(inProcess.status).toBe('COMPLETED');
    expect(resultBytes(viaSubprocess)).toBe(resultBytes(inProcess));
  });

  it('two runs created in the same second get distinct ids (_1) and both complete', async () => {
    await writeWorkspaceGraph(workspace, gridnavGraph('quick'));
    const now = new Date(2026, 0, 2, 3, 4, 5);
    const a = await makeRun(outputs, { graphName: 'quick', episodeCount: 1, activeWorkspaceDir: workspace }, now);
    const b = await makeRun(outputs, { graphName: 'quick', episodeCount: 1, activeWorkspaceDir: workspace }, now);
    expect(a.runId).toBe('20260102_030405');
    expect(b.runId).toBe('20260102_030405_1');
    const [sa, sb] = await Promise.all([a, b].map((r) => runBatch({ runDir: r.dir, onHostStarted: (h) => pids.push(h.pid) })));
    expect([sa!.runId, sb!.runId]).toEqual([a.runId, b.runId]);
    expect([sa!.status, sb!.status]).toEqual(['COMPLETED', 'COMPLETED']);
    expect(resultBytes(sa!)).toBe(resultBytes(sb!));
  });
});
