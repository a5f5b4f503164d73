import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import { HostClient } from '../../src/host/host-client.js';
import { spawnHost, type HostEntry, type HostProcess } from '../../src/host/host-process.js';
import { loadManifest } from '../../src/nodeset-registry/manifest.js';
import { hostSecretFor } from '../../src/host/host-secret.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const ECHO_DIR = join(FIXTURES, 'nodesets', 'echo');
const STUBBORN_DIR = join(FIXTURES, 'nodesets', 'stubborn');

async function entryOf(dir: string): Promise<HostEntry> {
  const manifest = await loadManifest(dir);
  return { name: manifest.name, dir, manifest };
}

/** Alive and not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The process group a process is in (field 5 of /proc/<pid>/stat, after the parenthesised name). */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

async function waitGone(pids: number[], withinMs: number): Promise<number> {
  const t0 = performance.now();
  while (pids.some(isRunning)) {
    if (performance.now() - t0 > withinMs) return -1;
    await new Promise((r) => setTimeout(r, 25));
  }
  return performance.now() - t0;
}

describe('spawnHost', () => {
  const hosts: HostProcess[] = [];
  const others: ResultPromise[] = [];
  const strays: number[] = [];
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.stop(500)));
    for (const p of others.splice(0)) p.kill('SIGKILL');
    for (const pid of strays.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it('a host answers only callers presenting its own secret; the API token never reaches it', async () => {
    const saved = process.env.EVAL_API_TOKEN;
    process.env.EVAL_API_TOKEN = 'api-token-for-the-test';
    let h: HostProcess;
    try {
      h = await spawnHost({ entry: await entryOf(ECHO_DIR) });
    } finally {
      if (saved === undefined) delete process.env.EVAL_API_TOKEN;
      else process.env.EVAL_API_TOKEN = saved;
    }
    hosts.push(h);
    const secret = hostSecretFor(h.url)!;
    expect(secret).toMatch(/^[\w-]{40,}$/);
    // Anyone else on the machine (or a page rebound to 127.0.0.1) is refused, whatever the route.
    const tries: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: secret }];
    for (const headers of tries) {
      const res = await fetch(`${h.url}/health`, { headers });
      expect(res.status).toBe(401);
      expect(JSON.stringify(await res.json())).not.toContain(secret);
    }
    const posted = await fetch(`${h.url}/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function: 'echo', inputs: {}, config: {}, ctx: {} }),
    });
    expect(posted.status).toBe(401);
    expect((await fetch(`${h.url}/health`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    // Its callers in this process present it without being told.
    const client = new HostClient(h.url);
    expect(await client.health()).toMatchObject({ ok: true, pid: h.pid });
    client.close();
    const stranger = new HostClient(h.url, { secret: 'guessed' });
    await expect(stranger.health()).rejects.toThrow(/Authorization/);
    stranger.close();
    const environ = readFileSync(`/proc/${h.pid}/environ`, 'utf8');
    expect(environ).not.toContain('EVAL_API_TOKEN');
    expect(environ).not.toContain('api-token-for-the-test');
    expect(readFileSync(`/proc/${h.pid}/cmdline`, 'utf8')).not.toContain(secret);
    await h.stop();
    expect(hostSecretFor(h.url)).toBeUndefined();
  });

  it('starts a JS nodeset host and reads its ready line; stop() ends it with SIGTERM', async () => {
    const h = await spawnHost({ entry: await entryOf(ECHO_DIR), tag: '3' });
    hosts.push(h);
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(h).toMatchObject({ nodeset: 'echo', tag: '3', alive: true });
    const client = new HostClient(h.url);
    expect(await client.health()).toEqual({ ok: true, nodeset: 'echo', tag: '3', pid: h.pid });
    client.close();
    await h.stop();
    await h.stop();
    expect(h.alive).toBe(false);
    expect(await h.exited).toEqual({ code: 0, signal: null });
    expect(isRunning(h.pid)).toBe(false);
  });

  it('starts a command host in its folder with EVAL_HOST_TAG, EVAL_NODESET_DIR and EVAL_PARENT_PID', async () => {
    const h = await spawnHost({ entry: await entryOf(STUBBORN_DIR), tag: 'w1' });
    hosts.push(h);
    const client = new HostClient(h.url);
    const health = (await client.health()) as unknown as Record<string, unknown>;
    client.close();
    expect(health).toMatchObject({ tag: 'w1', pid: h.pid, env: { dir: STUBBORN_DIR, parent: String(process.pid) } });
  });

  it('a host that exits before it is ready is an error carrying its stderr', async () => {
    const lines: string[] = [];
    const p = spawnHost({ entry: await entryOf(ECHO_DIR), env: { ECHO_FAIL_INIT: '1' }, onStderr: (l) => lines.push(l) });
    await expect(p).rejects.toMatchObject({
      code: 'HOST_ERROR',
      message: expect.stringMatching(/host echo exited before it was ready \(code 1.*init failed on purpose/s),
    });
    expect(lines.join('\n')).toContain('init failed on purpose');
  });

  it('a command that cannot be started is an error naming the program and why', async () => {
    const manifest = {
      name: 'ghost',
      parallelism: 'replicated' as const,
      command: ['no-such-program-here', 'host.py'],
      functions: [{ name: 'f', inputs: [], outputs: [] }],
    };
    await expect(spawnHost({ entry: { name: 'ghost', dir: STUBBORN_DIR, manifest } })).rejects.toThrow(
      'host ghost: could not start no-such-program-here: spawn no-such-program-here ENOENT',
    );
  });

  it('a host that never reports ready is killed after readyTimeoutMs', async () => {
    const p = spawnHost({ entry: await entryOf(STUBBORN_DIR), env: { STUBBORN_SILENT: '1' }, readyTimeoutMs: 400 });
    await expect(p).rejects.toThrow(/host stubborn did not report ready within 400 ms/);
  });

  it('aborting the signal while a host starts kills it', async () => {
    const ac = new AbortController();
    const p = spawnHost({ entry: await entryOf(STUBBORN_DIR), env: { STUBBORN_SILENT: '1' }, signal: ac.signal });
    setTimeout(() => ac.abort(new Error('run cancelled')), 200);
    await expect(p).rejects.toThrow('run cancelled');
  });

  it('stop() escalates to SIGKILL for a host that ignores SIGTERM', async () => {
    const h = await spawnHost({ entry: await entryOf(STUBBORN_DIR) });
    hosts.push(h);
    const t0 = performance.now();
    await h.stop(300);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(await h.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(h.alive).toBe(false);
  });

  it('hosts die within 2 s when their parent is killed with SIGKILL', async () => {
    const parent = execa(process.execPath, [join(FIXTURES, 'host-parent.mjs'), DIST_DIR, ECHO_DIR, STUBBORN_DIR], {
      stdin: 'ignore',
      buffer: false,
      reject: false,
    });
    others.push(parent);
    const pids = await new Promise<number[]>((resolve, reject) => {
      let out = '';
      parent.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /HOSTS (\[[\d,]+\])/.exec(out);
        if (m) resolve(JSON.parse(m[1]!) as number[]);
      });
      void parent.then((r) => reject(new Error(`parent exited early: ${String(r.stderr ?? '')}`)));
    });
    strays.push(...pids);
    expect(pids).toHaveLength(3);
    expect(pids.every(isRunning)).toBe(true);

    parent.kill('SIGKILL');
    await parent;
    const took = await waitGone(pids, 2000);
    expect(took, `hosts still running 2 s after the parent's SIGKILL: ${pids.filter(isRunning).join(', ')}`).toBeGreaterThanOrEqual(0);
  });

  it("hosts have their own process group: a signal to the parent's group (Ctrl-C, a cancel) reaches the parent alone; they still die with it", async () => {
    // Started as a shell starts a foreground job and as the scheduler starts an eval process: a group of its own.
    const parent = execa(process.execPath, [join(FIXTURES, 'host-parent.mjs'), DIST_DIR, ECHO_DIR, STUBBORN_DIR], {
      stdin: 'ignore',
      buffer: false,
      reject: false,
      detached: true,
    });
    others.push(parent);
    const pids = await new Promise<number[]>((resolve, reject) => {
      let out = '';
      parent.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /HOSTS (\[[\d,]+\])/.exec(out);
        if (m) resolve(JSON.parse(m[1]!) as number[]);
      });
      void parent.then((r) => reject(new Error(`parent exited early: ${String(r.stderr ?? '')}`)));
    });
    strays.push(...pids);
    expect(pids.map(processGroup)).toEqual(pids);
    expect(pids).not.toContain(parent.pid);

    process.kill(-parent.pid!, 'SIGKILL');
    await parent;
    const took = await waitGone(pids, 2000);
    expect(
      took,
      `hosts still running 2 s after their parent's group was killed: ${pids.filter(isRunning).join(', ')}`,
    ).toBeGreaterThanOrEqual(0);
  });
});
