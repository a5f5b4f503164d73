/** The score nodeset's handlers: nothing before the answer, then score, metrics and done. */
import { describe, expect, it } from 'vitest';
import score from '../../../src/nodesets/score/handlers.js';
import type { NodeCallArgs, NodeOutputs } from '../../../src/core/types.js';

const ctx = { runSeed: 0, episodeIndex: 0, seed: 0, step: 0, episodeKey: 'k', nodeId: 's' };
const call = (fn: string, inputs: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  score.functions![fn]!({ inputs, config, ctx } as NodeCallArgs) as NodeOutputs;

describe('score nodeset', () => {
  it('has one function per scorer', () => {
    expect(Object.keys(score.functions!).sort()).toEqual(['choice', 'exact', 'f1', 'includes', 'numeric', 'pattern']);
  });

  it('outputs nothing while there is no answer yet', () => {
    expect(call('exact', { target: 'x' })).toEqual({});
  });

  it('scores an answer: score object, metrics and done', () => {
    expect(call('numeric', { answer: 'so 1,000 in all', target: 1000 })).toEqual({
      score: {
        scorer: 'numeric',
        value: 1,
        answer: 'so 1,000 in all',
        extracted: '1000',
        target: 1000,
        explanation: '1000 is within tolerance of 1000',
      },
      metrics: { score: 1, correct: true },
      done: true,
    });
  });

  it('reads a chat message answer, passes choices, records a non-default config', () => {
    const out = call('choice', { answer: { role: 'assistant', content: 'Rome' }, target: 'C', choices: ['Paris', 'London', 'Rome'] });
    expect(out.score).toMatchObject({ value: 1, extracted: 'C', choices: ['Paris', 'London', 'Rome'] });
    expect((call('pattern', { answer: 'x=4', target: '4' }, { pattern: String.raw`x=(\d+)` }).score as { config: unknown }).config).toEqual(
      {
        pattern: String.raw`x=(\d+)`,
      },
    );
  });

  it('fails the node for a sample without a target or a bad target', () => {
    expect(() => call('exact', { answer: 'x' })).toThrow('scorer "exact" needs a target and the sample has none');
    expect(() => call('exact', { answer: 'x', target: { a: 1 } })).toThrow(/a target must be a string/);
  });
});
