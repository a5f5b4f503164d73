/**
 * A run that a local `evalctl run` writes into a server's outputs folder shows up in the
 * server's runs list while it runs and after, tells queueChanged listeners (the dashboard's
 * runs list refetches on it), and can be followed with runProgress.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../src/paths.js';
import { readSummary, runsRoot } from '../src/store/run-dir.js';
import { PROGRESS, startServer, waitFor, wsCollect, type TestServer } from './app.helpers.js';

const RUNS = `{ runs { total items { id status graphName episodeCount episodesDone } } }`;
const QUEUE_CHANGED = `subscription { queueChanged { queue { runId } } }`;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('runs written by a local evalctl run', () => {
  it('appear in `runs` while running and COMPLETED after, with a queueChanged event and a followable runProgress', async () => {
    const outputs = join(server.dir, 'outputs');
    let queueEvents = 0;
    const ws = server.ws();
    const unsubscribe = ws.subscribe({ query: QUEUE_CHANGED }, { next: () => queueEvents++, error: () => {}, complete: () => {} });
    // The subscription's first payload is the state at connect: count from after it.
    await waitFor('the queue subscription', () => queueEvents > 0);
    const before = queueEvents;

    const cli = execa(
      process.execPath,
      [join(DIST_DIR, 'main.js'), 'run', 'gridnav_planner', '--episodes', '20', '--outputs', outputs, '--json'],
      // Its own process group: the CLI and the eval process it starts can be held and let go together.
      { reject: false, detached: true, env: { ACTIVE_WORKSPACE_DIR: '' } },
    );
    try {
      const root = runsRoot(outputs);
      const runId = await waitFor(
        'the run to start running',
        async () => {
          const id = existsSync(root) ? readdirSync(root)[0] : undefined;
          if (!id) return undefined;
          const s = await readSummary(join(root, id)).catch(() => undefined);
          return s?.status === 'RUNNING' ? id : undefined;
        },
        30_000,
        20,
      );
      // Hold the run where it is (the CLI and its eval process), so "while running" does not depend on its speed.
      process.kill(-cli.pid!, 'SIGSTOP');
      const held = await readSummary(join(root, runId));
      expect(held.status).toBe('RUNNING');
      // It may be listed QUEUED first (picked up as its folder appeared), then RUNNING as summary.json says.
      const row = await waitFor('the run in `runs`, RUNNING', async () =>
        (await server.gql(RUNS)).data!.runs.items.find((r: { id: string; status: string }) => r.id === runId && r.status === 'RUNNING'),
      );
      expect(row).toMatchObject({ status: 'RUNNING', graphName: 'gridnav_planner', episodeCount: 20 });
      await waitFor('a queueChanged event for it', () => queueEvents > before);

      const progress = wsCollect(server.ws(), PROGRESS, { id: runId });
      process.kill(-cli.pid!, 'SIGCONT');
      const done = await cli;
      expect(done.exitCode).toBe(0);
      const states = await progress;
      expect(states.at(-1)!.data!.runProgress).toMatchObject({ status: 'COMPLETED', episodesDone: 20 });
      await waitFor('its final state in `runs`', async () =>
        (await server.gql(RUNS)).data!.runs.items.find(
          (r: { id: string; status: string; episodesDone: number }) => r.id === runId && r.status === 'COMPLETED' && r.episodesDone === 20,
        ),
      );
    } finally {
      unsubscribe();
      try {
        if (cli.pid) process.kill(-cli.pid, 'SIGCONT');
        if (cli.pid && cli.exitCode === null) process.kill(-cli.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await cli.catch(() => {});
    }
  });
});
