/** `evalctl serve` as a user starts it: prints its URL, answers, stops on SIGTERM. */
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../src/paths.js';
import { readSummary, runDirPath } from '../src/store/run-dir.js';
import { gql, START_EVAL, urlFrom, waitFor } from './app.helpers.js';

const MAIN = join(DIST_DIR, 'main.js');
let child: ResultPromise | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await child?.catch(() => {});
  child = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('evalctl serve', () => {
  it('prints its URL, serves GraphQL, and exits 0 on SIGTERM', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-'));
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', join(dir, 'outputs')], {
      reject: false,
      forceKillAfterDelay: false,
      env: { EVAL_API_TOKEN: '' },
    });
    const url = await urlFrom(child);
    expect((await fetch(url + '/healthz')).status).toBe(200);
    const res = await fetch(url + '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ graphs { name } }' }),
    });
    expect(((await res.json()) as { data: { graphs: Array<{ name: string }> } }).data.graphs.map((g) => g.name)).toContain(
      'gridnav_planner',
    );
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('SIGTERM');
  });

  it('bound to 0.0.0.0, prints the bind address and every address that reaches it, not only 127.0.0.1', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-'));
    child = execa('node', [MAIN, 'serve', '--host', '0.0.0.0', '--port', '0', '--outputs', join(dir, 'outputs')], {
      reject: false,
      forceKillAfterDelay: false,
      env: { EVAL_API_TOKEN: 'a-token-long-enough-for-the-server-0123456789' },
    });
    const printed = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(out.slice(0, nl));
      });
      void child!.catch(reject);
    });
    const port = /:(\d+)/.exec(printed)![1]!;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(printed).toContain(`0.0.0.0:${port}`);
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) if (a.family === 'IPv4') expect(printed).toContain(`http://${a.address}:${port}`);
    }
    child.kill('SIGTERM');
    await child;
  });

  it('on SIGTERM lets the running run finish, starts no queued one, then exits 0', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-'));
    const outputs = join(dir, 'outputs');
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs], {
      reject: false,
      forceKillAfterDelay: false,
      env: { EVAL_API_TOKEN: '' },
    });
    const url = await urlFrom(child);
    const a = await gql(url, START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 4, exclusiveGpu: true, overrides: { env: { step_latency_ms: 10 } } },
    });
    const runA = a.data!.startEval.runId as string;
    await waitFor(
      'run A to start',
      async () => (await readSummary(runDirPath(outputs, runA)).catch(() => null))?.status === 'RUNNING',
      20_000,
    );
    const b = await gql(url, START_EVAL, { input: { graphName: 'gridnav_planner', episodeCount: 2 } });
    const runB = b.data!.startEval.runId as string;
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stderr)).toMatch(/waiting for 1 running run/);
    expect((await readSummary(runDirPath(outputs, runA))).status).toBe('COMPLETED');
    expect((await readSummary(runDirPath(outputs, runB))).status).toBe('QUEUED');
  });

  it('with --cancel-running-on-exit cancels the running run and exits 0', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-'));
    const outputs = join(dir, 'outputs');
    child = execa('node', [MAIN, 'serve', '--port', '0', '--outputs', outputs, '--cancel-running-on-exit'], {
      reject: false,
      forceKillAfterDelay: false,
      env: { EVAL_API_TOKEN: '' },
    });
    const url = await urlFrom(child);
    const a = await gql(url, START_EVAL, {
      input: { graphName: 'gridnav_planner', episodeCount: 20, overrides: { env: { step_latency_ms: 50 } } },
    });
    const runA = a.data!.startEval.runId as string;
    await waitFor(
      'run A to start',
      async () => (await readSummary(runDirPath(outputs, runA)).catch(() => null))?.status === 'RUNNING',
      20_000,
    );
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect((await readSummary(runDirPath(outputs, runA))).status).toBe('CANCELLED');
  });

  it('refuses a non-loopback host without a token, saying so', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-'));
    const result = await execa('node', [MAIN, 'serve', '--host', '0.0.0.0', '--port', '0', '--outputs', join(dir, 'outputs')], {
      reject: false,
      env: { EVAL_API_TOKEN: '' },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/EVAL_API_TOKEN/);
  });

  it('rejects a bad port with a one-line error', async () => {
    const result = await execa('node', [MAIN, 'serve', '--port', 'eighty'], { reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--port must be an integer');
  });

  it('takes the names given with --allowed-hosts (comma-separated) besides loopback ones, and refuses others', async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-'));
    child = execa(
      'node',
      [MAIN, 'serve', '--port', '0', '--outputs', join(dir, 'outputs'), '--allowed-hosts', 'evals.lab.example,.cluster.example'],
      {
        reject: false,
        forceKillAfterDelay: false,
        env: { EVAL_API_TOKEN: '' },
      },
    );
    const url = await urlFrom(child);
    const statusWithHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: new URL(url).port, path: '/healthz', headers: { host }, setHost: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await statusWithHost('evals.lab.example:4000')).toBe(200);
    expect(await statusWithHost('n1.cluster.example')).toBe(200);
    expect(await statusWithHost('localhost')).toBe(200);
    expect(await statusWithHost('evil.example')).toBe(403);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);

    const bad = await execa('node', [MAIN, 'serve', '--port', '0', '--outputs', join(dir, 'outputs'), '--allowed-hosts', 'http://x/y'], {
      reject: false,
      env: { EVAL_API_TOKEN: '' },
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/not a host name/);
  });
});
