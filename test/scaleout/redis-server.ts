/**
 * A real redis-server for tests: on a free port, bound to 127.0.0.1, no persistence (no RDB,
 * no AOF), its files in a temp dir. `stop()` sends SIGTERM, then SIGKILL after a grace, and
 * removes the dir; it is idempotent.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
const STOP_GRACE_MS = 3000;
const START_TIMEOUT_MS = 10_000;

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** SIGKILL, as a crash: with no persistence, a Redis started again on the port holds nothing. Idempotent, as stop(). */
  kill(): Promise<void>;
}

/** A port the OS just handed out; the short window before redis binds it is covered by one retry. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function tryStart(dir: string, fixedPort?: number, args: readonly string[] = []): Promise<TestRedis> {
  const port = fixedPort ?? (await freePort());
  const child: ResultPromise = execa(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'notice', ...args],
    { reject: false, stdin: 'ignore', forceKillAfterDelay: STOP_GRACE_MS, cleanup: true },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${r.exitCode ?? r.signal}): ${out.slice(-500)}`));
    });
  });
  let stopped: Promise<void> | undefined;
  const end = (signal: NodeJS.Signals) => {
    stopped ??= (async () => {
      child.kill(signal);
      await child;
    })();
    return stopped;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}

/**
 * Starts redis-server (on `port` when given: a Redis that comes back where it was; `args`: more
 * redis-server flags); call `stop()` in afterAll.
 */
export async function startTestRedis(port?: number, args: readonly string[] = []): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-'));
  let server: TestRedis;
  try {
    server = await tryStart(dir, port, args).catch(() => tryStart(dir, port, args));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...server,
    stop: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
    kill: async () => {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
