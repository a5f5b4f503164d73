/**
 * worker_count is a speed dial, never a result dial: 40 episodes with 1, 3, 8 and 16 workers give
 * byte-identical records (timing and worker fields aside), aggregates, and node firings, also
 * when every host call is delayed by a random amount. Both graphs call a shared, batched
 * model host, so batches of different make-up must not change a single bit. Workers take the
 * next episode from a shared cursor (in an order balanced on their prices, where the env prices them), so which
 * worker runs which episode depends on timing: the results must not.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchOrder } from '../../src/eval-process/dispatch-order.js';
import { IN_PROCESS_ENV } from '../../src/eval-process/in-process-host.js';
import { runBatch } from '../../src/eval-process/run-batch.js';
import { episodeDir } from '../../src/store/run-dir.js';
import type { RunSpec, RunSummary } from '../../src/store/types.js';
import { isAlive, makeRun, resultBytes } from './run-helpers.js';

let outputs: string;
const pids: number[] = [];

beforeAll(async () => {
  outputs = await mkdtemp(join(tmpdir(), 'determinism-'));
});
afterAll(async () => {
  for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(outputs, { recursive: true, force: true });
});

interface Outcome {
  summary: RunSummary;
  /** Every episode's firing log with the per-firing wall time removed. */
  logs: string[];
  /** The nodesets whose hosts ran as child processes. */
  processes: Set<string>;
}

async function run(
  spec: Partial<RunSpec> & Pick<RunSpec, 'graphName' | 'episodeCount'>,
  delay: boolean,
  /** Every host a child process, also those of nodesets that declare themselves light (served in-process otherwise). */
  processesOnly = false,
): Promise<Outcome> {
  // Every worker's hosts boot at once, as on a machine with a core per host: on fewer cores the
  // last workers' hosts come up in turn, and in a run this short they may find no episode left.
  const cores = 64;
  const { dir } = await makeRun(outputs, { seed: 11, ...spec });
  const hostEnv: Record<string, string> = {
    ...(delay ? { EVAL_HOST_INJECT_DELAY_MS: '5' } : {}),
    ...(processesOnly ? { [IN_PROCESS_ENV]: '0' } : {}),
  };
  const processes = new Set<string>();
  const summary = await runBatch({
    runDir: dir,
    cores,
    // Likewise every play lane starts at once, this thread's too, rather than each as soon as it is up.
    lanesTogether: true,
    ...(Object.keys(hostEnv).length > 0 ? { hostEnv } : {}),
    onHostStarted: (h) => {
      pids.push(h.pid);
      processes.add(h.nodeset);
    },
  });
  const logs = await Promise.all(
    summary.episodes.map(async (e) => {
      const text = await readFile(join(episodeDir(dir, e.index), 'log.jsonl'), 'utf8');
      return text
        .trim()
        .split('\n')
        .map((line) => {
          const { ms: _ms, ...rest } = JSON.parse(line) as { ms: number };
          return JSON.stringify(rest);
        })
        .join('\n');
    }),
  );
  return { summary, logs, processes };
}

function expectIdentical(base: Outcome, other: Outcome, label: string): void {
  expect(other.summary.status, label).toBe('COMPLETED');
  expect(resultBytes(other.summary), label).toBe(resultBytes(base.summary));
  expect(other.logs.length, label).toBe(base.logs.length);
  for (const [i, log] of other.logs.entries()) expect(log, `${label}: firing log of episode ${i}`).toBe(base.logs[i]);
}

describe('determinism across worker counts', () => {
  it('gridnav_planner: 40 episodes on 1, 3, 8 and 16 workers (and 8 with random host delays) are byte-identical', async () => {
    const spec = { graphName: 'gridnav_planner', episodeCount: 40, dataset: 'mini' };
    const base = await run({ ...spec, workerCount: 1 }, false);
    expect(base.summary.status).toBe('COMPLETED');
    expect(base.summary.episodesDone).toBe(40);
    // The epsilon noise makes episodes differ, so a mix-up between episodes would show.
    expect(new Set(base.summary.episodes.map((e) => e.steps)).size).toBeGreaterThan(3);
    const workersOf = (o: Outcome) => new Set(o.summary.episodes.map((e) => e.workerId));
    const w3 = await run({ ...spec, workerCount: 3 }, false);
    expect(workersOf(w3).size).toBe(3);
    // gridnav prices its episodes (their fewest actions; its step budget is 2 × that + 11), so the
    // cursor hands them out in dispatchOrder's order: in that order the start times never go back.
    const prices = w3.summary.episodes.map((e) => ((e.stepBudget ?? 11) - 11) / 2);
    const handedOut = dispatchOrder(prices, 3).map((i) => w3.summary.episodes[i]!);
    expect(handedOut.map((e) => e.index)).not.toEqual(handedOut.map((_, i) => i));
    const starts = handedOut.map((e) => Date.parse(e.startedAt));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expectIdentical(base, w3, '3 workers');
    const w8 = await run({ ...spec, workerCount: 8 }, false);
    expect(workersOf(w8).size).toBe(8);
    expectIdentical(base, w8, '8 workers');
    expectIdentical(base, await run({ ...spec, workerCount: 8 }, true), '8 workers, delayed hosts');
    const w16 = await run({ ...spec, workerCount: 16 }, false);
    expect(workersOf(w16).size).toBeGreaterThan(1);
    expectIdentical(base, w16, '16 workers');
  }, 300_000);

  it('cartpole_mlp: 40 episodes on 1, 3 and 8 workers (and 3 with random host delays) are byte-identical', async () => {
    // A shortened budget keeps the test quick; the firing logs still compare every observation.
    const spec = { graphName: 'cartpole_mlp', episodeCount: 40, stepBudget: 40 };
    const base = await run({ ...spec, workerCount: 1 }, false);
    expect(base.summary.status).toBe('COMPLETED');
    expect(base.summary.episodesDone).toBe(40);
    expect(new Set(base.logs).size).toBe(40);
    expectIdentical(base, await run({ ...spec, workerCount: 3 }, false), '3 workers');
    expectIdentical(base, await run({ ...spec, workerCount: 8 }, false), '8 workers');
    expectIdentical(base, await run({ ...spec, workerCount: 3 }, true), '3 workers, delayed hosts');
  }, 300_000);

  it('hosts served in-process and in threads give the bytes of host processes (cartpole_mlp, gridnav_planner at 3 workers)', async () => {
    // env_cartpole, policy_mlp and planner declare inProcess (this thread); env_gridnav runs on this thread too (computing
    // with step_compute_ms, in play lanes) unless the run sets crash_at_step (its inlineUnless), then in threads: here at a
    // step no episode reaches. Switched off, every host is a child process.
    for (const spec of [
      { graphName: 'cartpole_mlp', episodeCount: 12, stepBudget: 40, workerCount: 3 },
      { graphName: 'gridnav_planner', episodeCount: 12, dataset: 'mini', workerCount: 3 },
      { graphName: 'gridnav_planner', episodeCount: 12, dataset: 'mini', workerCount: 3, overrides: { env: { step_compute_ms: 0.2 } } },
      {
        graphName: 'gridnav_planner',
        episodeCount: 12,
        dataset: 'mini',
        workerCount: 3,
        overrides: { env: { step_compute_ms: 0.2, crash_at_step: 100_000 } },
      },
    ]) {
      const inProcess = await run(spec, true);
      const processes = await run(spec, true, true);
      expect(processes.summary.status).toBe('COMPLETED');
      expect([...processes.processes].sort()).toEqual(
        spec.graphName === 'cartpole_mlp' ? ['env_cartpole', 'policy_mlp'] : ['env_gridnav', 'planner'],
      );
      expect([...inProcess.processes]).toEqual([]);
      expectIdentical(processes, inProcess, `${spec.graphName}: in-process against child processes`);
    }
  }, 300_000);
});
