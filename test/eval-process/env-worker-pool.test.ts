/** When the other workers' hosts boot: after startOthers(), or at once where the machine has a core per host. */
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_ENV } from '../../src/eval-process/in-process-host.js';
import { EnvWorkerPool } from '../../src/eval-process/env-worker-pool.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';

const pools: EnvWorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('EnvWorkerPool start-up', () => {
  it('boots slot 0 first and the others on startOthers(), or every slot at once with startAllAtOnce', async () => {
    const registry = await NodesetRegistry.scan();
    const nodesets = [registry.get('env_gridnav')];
    // Child-process hosts: the ones a pool lists (hosts served in this process have no pid of their own).
    const env = { [IN_PROCESS_ENV]: '0' };

    const deferred = await EnvWorkerPool.open({ workerCount: 2, nodesets, env });
    pools.push(deferred);
    expect(deferred.hosts().map((h) => h.tag)).toEqual(['0']);
    deferred.startOthers();
    await deferred.allReady();
    expect(deferred.hosts().map((h) => h.tag)).toEqual(['0', '1']);

    const eager = await EnvWorkerPool.open({ workerCount: 2, nodesets, env, startAllAtOnce: true });
    pools.push(eager);
    // No startOthers(): slot 1 boots anyway.
    await eager.ready(1);
    expect(eager.hosts().map((h) => h.tag)).toEqual(['0', '1']);
  }, 30_000);

  it('boots the other slots in lanes: with one lane, each slot starts booting once the one before it is up', async () => {
    const registry = await NodesetRegistry.scan();
    const nodesets = [registry.get('env_gridnav')];
    const env = { [IN_PROCESS_ENV]: '0' };
    const started: (string | null)[] = [];
    const pool = await EnvWorkerPool.open({ workerCount: 4, nodesets, env, bootLanes: 1, onHostStarted: (h) => started.push(h.tag) });
    pools.push(pool);
    pool.startOthers();
    await pool.ready(1);
    // Slot 2 began booting only now: its host cannot be up yet.
    expect(pool.hosts().map((h) => h.tag)).toEqual(['0', '1']);
    await pool.allReady();
    expect(started).toEqual(['0', '1', '2', '3']);
  }, 30_000);
});
