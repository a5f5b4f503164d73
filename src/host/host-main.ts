/**
 * Host entry: `node dist/host/host-main.js --nodeset-dir DIR [--tag T]`. Loads the nodeset,
 * listens on an OS-chosen port and prints `EVAL_HOST_READY {"port":N,"pid":P}` on stdout.
 * Exits when its parent dies: EOF on stdin (the parent holds the pipe) or a changed ppid.
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { errorMessage } from '../errors.js';
import { createHost, type Host } from './host.js';
import { readManifest } from '../nodeset-registry/read-manifest.js';
import { loadNodesetModule } from '../nodeset-registry/nodeset-module.js';
import { HOST_READY_PREFIX } from '../core/types.js';
import { takeOwnHostSecret } from './host-secret.js';
import { readModelKeysFromFd, takeModelKeys } from '../core/model-keys.js';

const PPID_POLL_MS = 500;

async function main(): Promise<void> {
  // Out of the environment before any nodeset code runs (and before any child it might start inherits it).
  const secret = takeOwnHostSecret();
  takeModelKeys();
  readModelKeysFromFd();
  const { values } = parseArgs({
    options: { 'nodeset-dir': { type: 'string' }, tag: { type: 'string' } },
    strict: true,
  });
  const dirArg = values['nodeset-dir'];
  if (!dirArg) throw new Error('usage: host-main --nodeset-dir DIR [--tag T]');
  const dir = resolve(dirArg);
  const tag = values.tag ?? process.env.EVAL_HOST_TAG ?? undefined;

  let host: Host | undefined;
  let exiting = false;
  const exit = (code: number): void => {
    if (exiting) return;
    exiting = true;
    // A host that cannot close promptly must still go: the parent is waiting or gone.
    setTimeout(() => process.exit(code), 1000).unref();
    void (host?.close() ?? Promise.resolve()).finally(() => process.exit(code));
  };

  const parentPid = process.ppid;
  process.stdin.on('end', () => exit(0));
  process.stdin.on('error', () => exit(0));
  process.stdin.resume();
  setInterval(() => {
    if (process.ppid !== parentPid) exit(0);
  }, PPID_POLL_MS).unref();
  process.on('SIGTERM', () => exit(0));
  process.on('SIGINT', () => exit(0));

  const manifest = await readManifest(dir);
  const mod = await loadNodesetModule(dir, manifest);
  await mod.init?.({ dir, manifest });
  host = createHost({ manifest, dir, module: mod, tag, ...(secret !== undefined ? { secret } : {}) });
  const port = await host.listen(0);
  if (exiting) return;
  process.stdout.write(`${HOST_READY_PREFIX}${JSON.stringify({ port, pid: process.pid })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`host: ${errorMessage(err)}\n`);
  process.exit(1);
});
