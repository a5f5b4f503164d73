/** Which way is better: wins, verdicts and the listing order follow each metric's declared goal and the primary metric. */
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/compare/compare-runs.js';
import { scoreTable } from '../../src/compare/episode-scores.js';
import { orderAggregates, orderMetrics } from '../../src/compare/metric-order.js';
import type { MetricRanges } from '../../src/core/types.js';
import { computeAggregates } from '../../src/store/aggregate.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { scoredRecord } from '../support/scored-run.js';

const declared: MetricRanges = {
  success: { min: 0, max: 1, goal: 'max', primary: true },
  steps: { min: 0, goal: 'min' },
  distance_to_goal: { min: 0, goal: 'min' },
};

const play = (index: number, metrics: EpisodeRecord['metrics']): EpisodeRecord => scoredRecord(index, metrics, `maze/${index}`);

// The better policy reaches the goal more often, in fewer steps, ending closer: every metric says so by its own goal.
const better = Array.from({ length: 12 }, (_, i) => play(i, { success: 1, steps: 10 + (i % 3), distance_to_goal: 0, extra: i }));
const worse = Array.from({ length: 12 }, (_, i) =>
  play(i, { success: i % 4 === 0 ? 1 : 0, steps: 30 + (i % 5), distance_to_goal: i % 4 === 0 ? 0 : 2 + (i % 3), extra: i }),
);

describe('metric goals', () => {
  it('counts wins as better by the goal and gives every metric the verdict its direction calls for', () => {
    const run = (runId: string, records: EpisodeRecord[]) => ({ runId, scores: scoreTable(records, declared) });
    const c = compareRuns(run('worse', worse), [run('better', better)]);
    const by = Object.fromEntries(c.candidates[0]!.metrics.map((m) => [m.metric, m]));
    // Fewer steps is a win for the better policy, not a loss.
    expect(by.steps).toMatchObject({ goal: 'min', wins: 12, losses: 0, verdict: 'BETTER' });
    expect(by.distance_to_goal).toMatchObject({ goal: 'min', losses: 0, verdict: 'BETTER' });
    expect(by.success).toMatchObject({ goal: 'max', wins: 9, losses: 0, verdict: 'BETTER' });
    expect(by.extra).toMatchObject({ goal: null, verdict: null, ties: 12 });
    // The other way round, every verdict turns.
    const back = compareRuns(run('better', better), [run('worse', worse)]).candidates[0]!.metrics;
    expect(back.filter((m) => m.goal !== null).map((m) => m.verdict)).toEqual(['WORSE', 'WORSE', 'WORSE']);
    // Primary first, then the metrics with a goal, then the rest.
    expect(c.metrics).toEqual(['success', 'distance_to_goal', 'steps', 'extra']);
  });

  it('lists the primary metric first in a run’s aggregates, whatever its name', () => {
    const aggs = computeAggregates(better, declared).aggregateMetrics;
    expect(aggs.map((m) => m.name)).toEqual(['distance_to_goal', 'extra', 'steps', 'success']);
    expect(orderAggregates(aggs).map((m) => m.name)).toEqual(['success', 'distance_to_goal', 'steps', 'extra']);
    expect(aggs.find((m) => m.name === 'success')).toMatchObject({ goal: 'max', primary: true });
    expect(
      orderMetrics(['b', 'a', 'score', 'completion_tokens'], { score: { primary: true }, completion_tokens: { goal: 'min' } }),
    ).toEqual(['score', 'completion_tokens', 'a', 'b']);
  });
});
