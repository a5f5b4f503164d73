/**
 * Typed topics between the app's event sources (the scheduler) and the subscriptions.
 */
import { createPubSub } from 'graphql-yoga';
import type { ActiveJob, QueueEntry } from '../scheduler/types.js';
import type { RunSummary } from '../store/types.js';

/** The queue in admission order and the jobs running now. */
export interface QueueState {
  queue: QueueEntry[];
  activeJobs: ActiveJob[];
}

export type ApiTopics = {
  /** Any change to the queue or the active jobs. */
  queueChanged: [QueueState];
  /** A run's state as the scheduler knows it (admitted, cancelled, reaped), keyed by run id. */
  runChanged: [runId: string, summary: RunSummary];
};

export type ApiPubSub = ReturnType<typeof createApiPubSub>;

export function createApiPubSub() {
  return createPubSub<ApiTopics>();
}
