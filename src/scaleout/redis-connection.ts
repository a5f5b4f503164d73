/** Redis connections for the scale-out head and workers, and the error for a Redis that cannot be reached. */
import { Redis } from 'ioredis';
import { CodedError, errorMessage } from '../errors.js';

/** Redis cannot be reached: at `serve --redis` / `worker` start, or when a run is submitted. */
export class RedisUnavailableError extends CodedError {
  constructor(url: string, cause: unknown) {
    super(
      'REDIS_UNAVAILABLE',
      `Redis at ${url} cannot be reached (${typeof cause === 'string' ? cause : errorMessage(cause)}); is redis-server running there?`,
      {
        cause,
      },
    );
  }
}

/**
 * A client that connects on `connect()`. `failFast`: commands fail at once while disconnected
 * (for a request that must be answered); else they wait for the reconnection, as BullMQ's
 * workers need (`maxRetriesPerRequest: null`).
 */
export function redisClient(url: string, opts: { failFast: boolean }): Redis {
  return new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    // Reconnect every 0.2–1 s for ever: a Redis restart is survived.
    retryStrategy: (times) => Math.min(200 * times, 1000),
    ...(opts.failFast ? { enableOfflineQueue: false, maxRetriesPerRequest: 1 } : { maxRetriesPerRequest: null }),
  });
}
