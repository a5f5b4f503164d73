/**
 * A run as a BullMQ flow (scale-out over Redis): the run is the parent job, each shard a child
 * job whose id is derived from (run id, shard), so submitting the same run again cannot
 * duplicate a shard. Shard boundaries come from the spec (spec/shards.ts). The head adds it
 * (scaleout-head.ts); workers take the children (shard-worker.ts). See docs/scale-out.md.
 */
import type { FlowProducer } from 'bullmq';
import { RUN_LIMITS, type RunSpec } from '../spec/run-spec.js';
import { shardCountOf, shardPlays, shardRange } from '../spec/shards.js';

/** The queue of shard jobs that workers take. */
export const SHARD_QUEUE = 'eval-shards';
/** The queue of run (parent) jobs: a run job waits for its shards. */
export const RUN_QUEUE = 'eval-runs';

/**
 * How often a shard is tried before it fails for good (the head then ends the run FAILED,
 * SHARD_FAILED): a worker that could not reach the head, or whose eval process died, hands the
 * shard back and any worker takes it again after BullMQ's exponential backoff (1 s, 2 s, 4 s, 8 s).
 */
export const SHARD_ATTEMPTS = 5;
export const SHARD_BACKOFF = { type: 'exponential', delay: 1000 } as const;

/** What a shard job carries: enough to find the run on the head and the indices to play. */
export interface ShardJobData {
  runId: string;
  shard: number;
  /** Run indices `[first, end)`. */
  first: number;
  end: number;
}

/**
 * The run's job id for one attempt: the run id, and from the second attempt (a retry, or a
 * resume after the head stopped) the attempt too, so that jobs an earlier attempt left in Redis
 * (a shard still locked by a worker when it ended) cannot swallow the new attempt's shards.
 */
export const runJobId = (runId: string, attempt = 1): string => (attempt > 1 ? `${runId}-a${attempt}` : runId);

/** BullMQ refuses `:` in custom job ids (it is its key separator), hence `-shard-`. */
export const shardJobId = (runId: string, shard: number, attempt = 1): string => `${runJobId(runId, attempt)}-shard-${shard}`;

/**
 * The BullMQ priority of a run priority: BullMQ takes 1 first and larger later (0 means none),
 * the run spec takes higher first, so the range -max..max maps onto 2max+1..1.
 */
export const bullPriorityOf = (priority: number): number => RUN_LIMITS.maxPriority - priority + 1;

/**
 * Adds the flow of one attempt of the run: one parent, one child per shard (or per shard of
 * `only`: those a Redis that forgot the flow lost and the head has not seen committed); adding
 * it again changes nothing while Redis still holds it.
 */
export async function addRunFlow(
  flows: FlowProducer,
  spec: Pick<RunSpec, 'runId' | 'episodeCount' | 'shardSize' | 'priority' | 'repeats' | 'audit'>,
  attempt = 1,
  only?: readonly number[],
): Promise<void> {
  const priority = bullPriorityOf(spec.priority);
  // An audit's scratch run queues only the shards its sample touches.
  const shards = Array.from({ length: shardCountOf(spec) }, (_, shard) => shard).filter(
    (shard) => shardPlays(spec, shard).length > 0 && (only === undefined || only.includes(shard)),
  );
  const children = shards.map((shard) => {
    const data: ShardJobData = { runId: spec.runId, shard, ...shardRange(spec, shard) };
    return {
      name: 'shard',
      queueName: SHARD_QUEUE,
      data,
      opts: { jobId: shardJobId(spec.runId, shard, attempt), priority, attempts: SHARD_ATTEMPTS, backoff: SHARD_BACKOFF },
    };
  });
  await flows.add({
    name: 'run',
    queueName: RUN_QUEUE,
    data: { runId: spec.runId },
    opts: { jobId: runJobId(spec.runId, attempt) },
    children,
  });
}
