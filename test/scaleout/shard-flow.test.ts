/**
 * The shard-flow building block and the test Redis (the flow on a real Redis is covered by
 * fleet.test.ts).
 */
import { createConnection } from 'node:net';
import { describe, expect, it } from 'vitest';
import { bullPriorityOf, shardJobId } from '../../src/scaleout/shard-flow.js';
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
