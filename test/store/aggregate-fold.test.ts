import { describe, expect, it } from 'vitest';
import { createPrng, type Prng } from '../../src/core/prng.js';
import { computeAggregates } from '../../src/store/aggregate.js';
import { AggregateFold } from '../../src/store/aggregate-fold.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import type { EpisodeStatus } from '../../src/statuses.js';

const STATUSES: EpisodeStatus[] = [
  'COMPLETED',
  'COMPLETED',
  'COMPLETED',
  'TIMEOUT',
  'CANCELLED',
  'INFRA_ERROR',
  'ERROR',
  'BUDGET_EXHAUSTED',
];

/** A run of `n` episodes × `repeats` plays with metrics that come and go, tasks, clusters and every kind of ending. */
function randomRun(rng: Prng, n: number, repeats: number, opts: { tasks: boolean; clusters: boolean }): EpisodeRecord[] {
  const out: EpisodeRecord[] = [];
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < repeats; k++) {
      const metrics: EpisodeRecord['metrics'] = {};
      if (rng.int(10) > 0) metrics.correct = rng.int(2) === 1;
      if (rng.int(4) > 0) metrics.score = rng.next() * 10 - 3;
      // A metric that first appears late, after endings of several kinds.
      if (i > n / 2 && rng.int(3) === 0) metrics.late = rng.int(5);
      if (rng.int(5) === 0) metrics.label = 'text';
      const r: EpisodeRecord = {
        index: i * repeats + k,
        episodeId: `d/test/${i}`,
        status: STATUSES[rng.int(STATUSES.length)]!,
        steps: 1,
        metrics,
        seed: i,
        workerId: 0,
        durationMs: 1,
        startedAt: '',
        finishedAt: '',
        stepBudget: 4,
        assets: [],
      };
      if (opts.tasks && rng.int(4) > 0) r.task = `t${rng.int(3)}`;
      if (opts.clusters && rng.int(5) > 0) r.cluster = `c${i % 4}`;
      if (repeats > 1) r.repeat = k;
      out.push(r);
    }
  }
  return out;
}

const text = (v: unknown) => JSON.stringify(v, null, 2);

describe('AggregateFold', () => {
  it('gives byte-identical aggregates to computeAggregates after every record, with and without repeats, tasks and clusters', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const rng = createPrng(seed);
      const repeats = seed % 3 === 0 ? 3 : 1;
      const records = randomRun(rng, 24, repeats, { tasks: seed % 2 === 0, clusters: seed % 4 < 2 });
      // Declared ranges on half the runs: `correct` a rate, `score` cut to where it can be, `late` a count;
      // on half of those a missing value too, for `correct` and for `never`, which no play reports.
      const missing = seed % 4 === 1 ? { missing: 0 } : {};
      const ranges =
        seed % 2 === 1
          ? { correct: { min: 0, max: 1, ...missing }, score: { min: -3, max: 7 }, late: { min: 0 }, never: { min: 0, max: 1, ...missing } }
          : undefined;
      const fold = new AggregateFold(ranges);
      for (let i = 0; i < records.length; i++) {
        fold.fold(records[i]!);
        expect(fold.exact).toBe(true);
        expect(text(fold.aggregates())).toBe(text(computeAggregates(records.slice(0, i + 1), ranges)));
      }
      if (ranges) expect(text(fold.clone().aggregates())).toBe(text(computeAggregates(records, ranges)));
    }
  });

  it('leaves the original untouched when records are folded into a clone', () => {
    const records = randomRun(createPrng(99), 30, 2, { tasks: true, clusters: true });
    const fold = new AggregateFold();
    for (const r of records.slice(0, 20)) fold.fold(r);
    const before = text(fold.aggregates());
    const copy = fold.clone();
    for (const r of records.slice(20)) copy.fold(r);
    expect(text(fold.aggregates())).toBe(before);
    expect(text(copy.aggregates())).toBe(text(computeAggregates(records)));
  });

  it('is not exact for records that mix plays with and without repeat (computeAggregates decides over the whole set)', () => {
    const [a, b] = randomRun(createPrng(5), 2, 1, { tasks: false, clusters: false });
    const fold = new AggregateFold();
    fold.fold(a!);
    fold.fold({ ...b!, repeat: 0 });
    expect(fold.exact).toBe(false);
  });
});
