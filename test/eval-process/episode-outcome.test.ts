import { describe, expect, it } from 'vitest';
import { outcomeOfException, outcomeOfResult } from '../../src/eval-process/episode-outcome.js';
import { resolveStepBudget } from '../../src/eval-process/step-budget.js';
import { DEFAULT_STEP_BUDGET, type ExecutorResult } from '../../src/core/types.js';

const result = (over: Partial<ExecutorResult>): ExecutorResult => ({
  ending: 'completed',
  steps: 4,
  metrics: { success: true },
  nodeErrors: [],
  assets: [],
  ...over,
});

describe('episode outcome', () => {
  it('maps each executor ending onto an episode status', () => {
    expect(outcomeOfResult(result({}), undefined, 1000).status).toBe('COMPLETED');
    expect(outcomeOfResult(result({ metrics: {} }), undefined, 1000).status).toBe('NO_VERDICT');
    expect(outcomeOfResult(result({ ending: 'budget_exhausted' }), undefined, 1000).status).toBe('BUDGET_EXHAUSTED');
    expect(outcomeOfResult(result({ ending: 'crashed', error: 'host env_gridnav#1 died' }), undefined, 1000)).toEqual({
      status: 'CRASHED',
      error: 'host env_gridnav#1 died',
    });
    expect(outcomeOfResult(result({ ending: 'aborted' }), 'timeout', 1000)).toEqual({
      status: 'TIMEOUT',
      error: 'wall-clock limit of 1000 ms reached',
    });
    expect(outcomeOfResult(result({ ending: 'aborted' }), 'cancel', 1000).status).toBe('CANCELLED');
    expect(outcomeOfException(new Error('boom'), undefined, 1000)).toEqual({ status: 'CRASHED', error: 'boom' });
  });

  it('calls a host lost after the cancel a cancel, not a crash', () => {
    const cancelled = { status: 'CANCELLED', error: 'the run was cancelled' };
    expect(outcomeOfResult(result({ ending: 'crashed', error: 'host env_gridnav#1 is gone: ECONNREFUSED' }), 'cancel', 1000)).toEqual(
      cancelled,
    );
    expect(
      outcomeOfResult(result({ ending: 'error', nodeErrors: [{ nodeId: 'env', step: 2, message: 'ECONNRESET' }] }), 'cancel', 1000),
    ).toEqual(cancelled);
    expect(outcomeOfException(new Error('socket hang up'), 'cancel', 1000)).toEqual(cancelled);
    // What finished before the cancel keeps its ending.
    expect(outcomeOfResult(result({}), 'cancel', 1000).status).toBe('COMPLETED');
    expect(outcomeOfResult(result({ ending: 'budget_exhausted' }), 'cancel', 1000).status).toBe('BUDGET_EXHAUSTED');
    expect(outcomeOfResult(result({ ending: 'crashed', error: 'died' }), 'timeout', 1000).status).toBe('CRASHED');
  });

  it('names the nodes that failed', () => {
    const out = outcomeOfResult(
      result({
        ending: 'error',
        nodeErrors: [
          { nodeId: 'env', step: 2, message: 'step failed' },
          { nodeId: 'agent', step: 2, message: 'x' },
        ],
      }),
      undefined,
      1000,
    );
    expect(out.status).toBe('ERROR');
    expect(out.error).toContain('"env", "agent"');
    expect(out.error).toContain('step failed');
  });
});

describe('step budget', () => {
  it('prefers the API, then the env, then the graph, then the default', () => {
    expect(resolveStepBudget({ api: 5, env: 6, graph: 7 })).toEqual({ budget: 5, source: 'api' });
    expect(resolveStepBudget({ env: 6, graph: 7 })).toEqual({ budget: 6, source: 'env' });
    expect(resolveStepBudget({ graph: 7 })).toEqual({ budget: 7, source: 'graph' });
    expect(resolveStepBudget({})).toEqual({ budget: DEFAULT_STEP_BUDGET, source: 'default' });
  });

  it('refuses a budget below 1, naming the value and where it came from', () => {
    expect(() => resolveStepBudget({ env: 0, graph: 7 })).toThrow(/step budget 0 \(from env\)/);
    expect(() => resolveStepBudget({ api: 2.5 })).toThrow(/2\.5/);
  });
});
