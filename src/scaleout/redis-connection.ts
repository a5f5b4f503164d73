/** Redis connections for the scale-out head and workers, and the error for a Redis that cannot be reached. */
import { Redis } from 'ioredis';
import { CodedError, errorMessage } from '../errors.js';

/**
 * The Redis URL as it may be shown (errors, logs, run summaries, API answers): its password, and
 * a user name that could be a token, replaced by `***`.
 */
export function shownRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.username) u.username = '***';
    return u.toString();
  } catch {
    // Not a URL the parser takes: hide anything before an "@".
    return url.replace(/\/\/[^/@]*@/, '//***@');
  }
}

/** Redis cannot be reached: at `serve --redis` / `worker` start, or when a run is submitted. */
export class RedisUnavailableError extends CodedError {
  constructor(url: string, cause: unknown) {
    super(
      'REDIS_UNAVAILABLE',
      `Redis at ${shownRedisUrl(url)} cannot be reached (${typeof cause === 'string' ? cause : errorMessage(cause)}); is redis-server running there?`,
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
