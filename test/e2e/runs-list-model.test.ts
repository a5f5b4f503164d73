/** What the runs list and the run page show of runs: the config that differs from the others in view, endings in words, the metric charts. */
import { describe, expect, it } from 'vitest';
import { metricSeries } from '../../web/src/lib/metrics.js';
import { endingParts, problemCount } from '../../web/src/lib/endings.js';
import { configDiffs } from '../../web/src/lib/runConfig.js';

describe('configDiffs', () => {
  it('shows only the values that are not the same in every run, overrides as node.key', () => {
    const diffs = configDiffs([
      { id: 'a', spec: { seed: 0, episodeCount: 200, overrides: { agent: { epsilon: 0.1 } } } },
      { id: 'b', spec: { seed: 1, episodeCount: 200, overrides: { agent: { epsilon: 0.3 }, env: { fail_at_step: 5 } } } },
      { id: 'c', spec: { seed: 0, episodeCount: 200, dataset: 'mini', overrides: {} } },
    ]);
    const shown = (id: string) => diffs.get(id)!.map((c) => `${c.label}=${c.text}`);
    expect(shown('a')).toEqual(['dataset=–', 'seed=0', 'agent.epsilon=0.1', 'env.fail_at_step=–']);
    expect(shown('b')).toEqual(['dataset=–', 'seed=1', 'agent.epsilon=0.3', 'env.fail_at_step=5']);
    expect(shown('c')).toEqual(['dataset=mini', 'seed=0', 'agent.epsilon=–', 'env.fail_at_step=–']);
  });

  it("names the frozen model and sampling where runs differ in them, and leaves a lone run's model out", () => {
    const spec = (model: string, temperature: number) => ({
      seed: 0,
      overrides: {},
      models: [{ node: 'llm', type: 'llm__chat', model, baseUrl: 'http://m/v1', sampling: { temperature, max_tokens: 512 } }],
    });
    const diffs = configDiffs([
      { id: 'a', spec: spec('fake-1', 0) },
      { id: 'b', spec: spec('fake-2', 0.7) },
    ]);
    expect(diffs.get('a')!.map((c) => `${c.label}=${c.text}`)).toEqual(['llm.model=fake-1', 'llm.temperature=0']);
    expect(diffs.get('b')!.map((c) => `${c.label}=${c.text}`)).toEqual(['llm.model=fake-2', 'llm.temperature=0.7']);
    expect(configDiffs([{ id: 'a', spec: spec('fake-1', 0) }]).get('a')).toEqual([]);
  });

  it('shows a lone run its overrides, and nothing for a run without a spec', () => {
    expect(
      configDiffs([{ id: 'a', spec: { seed: 3, overrides: { agent: { epsilon: 0.1 } } } }])
        .get('a')!
        .map((c) => c.key),
    ).toEqual(['agent.epsilon']);
    expect(configDiffs([{ id: 'a' }, { id: 'b' }]).get('a')).toEqual([]);
  });
});

describe('endingParts', () => {
  it('says how episodes ended beyond completed, problems first', () => {
    const counts = [
      { status: 'COMPLETED' as const, count: 6 },
      { status: 'BUDGET_EXHAUSTED' as const, count: 2 },
      { status: 'ERROR' as const, count: 10 },
      { status: 'TIMEOUT' as const, count: 1 },
      { status: 'CRASHED' as const, count: 0 },
    ];
    expect(endingParts(counts).map((p) => [p.text, p.problem])).toEqual([
      ['10 errors', true],
      ['1 timeout', true],
      ['2 out of budget', false],
    ]);
    expect(problemCount(counts)).toBe(11);
  });

  it("says the episodes were cancelled, not the run's status again", () => {
    const text = (count: number) => endingParts([{ status: 'CANCELLED', count }]).map((p) => p.text);
    expect(text(2)).toEqual(['2 episodes cancelled']);
    expect(text(1)).toEqual(['1 episode cancelled']);
  });
});

describe('metricSeries', () => {
  it('leaves out the endings the run means leave out, so the running mean ends at the reported mean', () => {
    const episodes = [
      { index: 3, status: 'CANCELLED', metrics: { success: 0 } },
      { index: 0, status: 'COMPLETED', metrics: { success: 1 } },
      { index: 2, status: 'INFRA_ERROR', metrics: { success: 0 } },
      { index: 1, status: 'BUDGET_EXHAUSTED', metrics: { success: 0 } },
      { index: 4, status: 'COMPLETED', metrics: { success: 1 } },
    ];
    expect(metricSeries(episodes, 'success')).toEqual({ x: [0, 1, 4], y: [1, 0, 1], mean: [1, 0.5, 2 / 3] });
  });
});
