/** A Redis URL's password never reaches an error, a log line or a run's summary. */
import { describe, expect, it } from 'vitest';
import { RedisUnavailableError, shownRedisUrl } from '../../src/scaleout/redis-connection.js';

describe('shownRedisUrl', () => {
  it('hides the password and user name, and keeps the rest', () => {
    expect(shownRedisUrl('redis://:hunter2pw@127.0.0.1:6379')).toBe('redis://:***@127.0.0.1:6379');
    expect(shownRedisUrl('rediss://ops:hunter2pw@cache.internal:6380/2')).toBe('rediss://***:***@cache.internal:6380/2');
    expect(shownRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(shownRedisUrl('redis://:pw@[bad')).toBe('redis://***@[bad');
  });

  it('is what REDIS_UNAVAILABLE says', () => {
    const err = new RedisUnavailableError('redis://:hunter2pw@127.0.0.1:1', 'connect ECONNREFUSED');
    expect(err.message).toContain('Redis at redis://:***@127.0.0.1:1 cannot be reached');
    expect(err.message).not.toContain('hunter2pw');
  });
});
