/**
 * Typed topics between the app's event sources (the scheduler) and the subscriptions. A run's
 * progress does not go through here: it comes from its summary.json, through the RunWatcher.
 */
import { createPubSub } from 'graphql-yoga';
import type { ActiveJob, QueueEntry } from '../scheduler/types.js';

/** The queue in admission order and the jobs running now. */
export interface QueueState {
  queue: QueueEntry[];
  activeJobs: ActiveJob[];
}

export type ApiTopics = {
  /** Any change to the queue or the active jobs. */
  queueChanged: [QueueState];
};

export type ApiPubSub = ReturnType<typeof createApiPubSub>;

export function createApiPubSub() {
  return createPubSub<ApiTopics>();
}
