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
});
