/**
 * The shard-flow building block and the test Redis (the flow on a real Redis is covered by
 * fleet.test.ts).
 */
import { createConnection } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FlowProducer, Queue } from 'bullmq';
import { addRunFlow, bullPriorityOf, SHARD_QUEUE, shardJobId } from '../../src/scaleout/shard-flow.js';
import { startTestRedis } from './redis-server.js';

/** One RESP command over a raw socket, its first reply line. */
function command(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write(`${line}\r\n`));
    socket.once('data', (d) => {
      resolve(d.toString().split('\r\n')[0]!);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

describe('shard flow', () => {
  it('maps a higher run priority to a BullMQ priority taken first (1 is first)', () => {
    expect(bullPriorityOf(10)).toBeLessThan(bullPriorityOf(0));
    expect(bullPriorityOf(1_000_000)).toBe(1);
    expect(bullPriorityOf(-1_000_000)).toBe(2_000_001);
  });

  it('shard job ids are fixed by (run id, shard) and free of the ":" BullMQ refuses', () => {
    expect(shardJobId('20261201_000000_1', 3)).toBe('20261201_000000_1-shard-3');
    // A later attempt (retry, resume) gets its own ids: an earlier attempt's leftover jobs cannot swallow its shards.
    expect(shardJobId('20261201_000000_1', 3, 2)).toBe('20261201_000000_1-a2-shard-3');
  });
});

describe('shard flow on Redis', () => {
  it("queues only the shards an audit's sample touches", async () => {
    const redis = await startTestRedis();
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
    const flows = new FlowProducer({ connection });
    const shards = new Queue(SHARD_QUEUE, { connection });
    try {
      const spec = { runId: 'r9', episodeCount: 12, shardSize: 4, priority: 0 };
      await addRunFlow(flows, { ...spec, audit: { of: 'r1', indices: [1, 9, 10] } });
      const jobs = await shards.getJobs(['waiting', 'prioritized', 'delayed', 'waiting-children']);
      expect(jobs.map((j) => j.id).sort()).toEqual([shardJobId('r9', 0), shardJobId('r9', 2)]);
    } finally {
      await shards.close();
      await flows.close();
      await redis.stop();
    }
  });
});

describe('test redis-server', () => {
  it('starts on a free port without persistence and stops, leaving nothing listening', async () => {
    const redis = await startTestRedis();
    try {
      expect(await command(redis.port, 'PING')).toBe('+PONG');
      expect(await command(redis.port, 'CONFIG GET appendonly')).toBe('*2');
    } finally {
      await redis.stop();
      await redis.stop();
    }
    await expect(command(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);
  });
});
