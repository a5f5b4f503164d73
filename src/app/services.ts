/**
 * The services behind the API: the scheduler, graph and nodeset catalogs, run reading and
 * watching, pub/sub and Live Play, wired together; scheduler events reach the watchers and
 * the queue subscription.
 */
import { resolve } from 'node:path';
import { errorMessage } from '../errors.js';
import { DatasetCatalog } from '../datasets/dataset-catalog.js';
import { GraphCatalog } from '../graph/graph-catalog.js';
import { NodesetRegistry } from '../nodeset-registry/registry.js';
import { assetUrlPath, type ApiContext } from '../resolvers/context.js';
import { PlayRunner } from '../resolvers/play-runner.js';
import { createApiPubSub } from '../resolvers/pubsub.js';
import { JobScheduler } from '../scheduler/job-scheduler.js';
import { ScaleoutHead } from '../scaleout/scaleout-head.js';
import type { SchedulerEvent, SchedulerLogger } from '../scheduler/types.js';
import { RunReader } from '../store/run-reader.js';
import { RunWatcher } from '../store/run-watcher.js';
import type { AppOptions } from './app-options.js';

export interface Services {
  services: Omit<ApiContext, 'signal'>;
  scheduler: JobScheduler;
  /** With `redis`: the head that hands runs to the scale-out workers. */
  scaleout: ScaleoutHead | undefined;
  /** Starts forwarding scheduler events; returns the unsubscribe. */
  forwardEvents(): () => void;
  /** Drops a queue update still waiting to go out. */
  cancelPending(): void;
}

export function buildServices(options: AppOptions, log: SchedulerLogger, backendUrl: () => string): Services {
  const outputsDir = resolve(options.outputsDir);
  const scaleout = options.redis ? new ScaleoutHead({ ...options.redis, log }) : undefined;
  const scheduler = new JobScheduler({
    ...options.scheduler,
    ...(scaleout ? { remote: scaleout } : {}),
    outputsDir,
    backendUrl,
    logger: options.scheduler?.logger ?? log,
  });
  const workspaceDir = options.scheduler?.workspaceDir;
  const graphs = new GraphCatalog({
    ...(options.scheduler?.builtinGraphsDir ? { builtinDir: options.scheduler.builtinGraphsDir } : {}),
    ...(workspaceDir ? { workspaceDir } : {}),
  });
  const nodesets = {
    list: async () =>
      (
        await NodesetRegistry.scan({
          ...(options.scheduler?.builtinNodesetsDir ? { builtinDir: options.scheduler.builtinNodesetsDir } : {}),
          ...(workspaceDir ? { workspaceDir } : {}),
        })
      ).list(),
  };
  const datasets = new DatasetCatalog(workspaceDir ? { workspaceDir } : {});
  const watcher = new RunWatcher({
    outputsDir,
    onError: (err, runId) => log.warn(`watching run ${runId}: ${errorMessage(err)}`),
  });
  const pubsub = createApiPubSub();
  const services: Omit<ApiContext, 'signal'> = {
    outputsDir,
    scheduler,
    // The catalog opens in scheduler.start(); resolvers only run after that.
    catalog: {
      getRun: (id) => scheduler.catalog.getRun(id),
      listRuns: (opts) => scheduler.catalog.listRuns(opts),
      countRuns: (opts) => scheduler.catalog.countRuns(opts),
      setLabels: (id, labels) => scheduler.catalog.setLabels(id, labels),
    },
    graphs,
    nodesets,
    datasets,
    runs: new RunReader(outputsDir),
    watcher,
    pubsub,
    play: new PlayRunner({ graphs, nodesets, lock: scheduler, policy: scheduler.policy }),
    assetUrl: assetUrlPath,
    ...(scaleout ? { scaleout } : {}),
  };

  // Queue events arrive in bursts (a tick changes several jobs): publish once per turn of the loop.
  let queuePublish: NodeJS.Immediate | undefined;
  const publishQueue = () => {
    queuePublish ??= setImmediate(() => {
      queuePublish = undefined;
      try {
        pubsub.publish('queueChanged', { queue: scheduler.queue(), activeJobs: scheduler.activeJobs() });
      } catch (err) {
        log.warn(`publishing the queue: ${errorMessage(err)}`);
      }
    });
  };
  const onSchedulerEvent = (e: SchedulerEvent) => {
    // A run's status change (admitted, cancelled, reaped) reaches its watchers at once, and the file is read once more.
    if (e.type === 'run' && e.summary.status === 'QUEUED') watcher.reopen(e.runId);
    if (e.type === 'run') watcher.offer(e.runId, e.summary);
    publishQueue();
  };
  return {
    services,
    scheduler,
    scaleout,
    forwardEvents: () => scheduler.subscribe(onSchedulerEvent),
    cancelPending: () => {
      if (queuePublish) clearImmediate(queuePublish);
    },
  };
}
