/**
 * LoopRunner: one per episode. Each run builds a fresh GraphExecutor, so an episode starts
 * from clean state by construction rather than by a reset path.
 */
import { GraphExecutor, type GraphExecutorOptions, type UrlOverrides } from './executor.js';
import type { ValidatedGraph } from './graph.js';
import { DEFAULT_STEP_BUDGET, type ExecutorResult } from '../core/types.js';

export interface LoopRunnerOptions {
  /** This worker's hosts: nodeset name → URL. @default none: every call goes to the registered host */
  urlOverrides?: UrlOverrides;
}

export interface LoopRunOptions extends Omit<GraphExecutorOptions, 'graph' | 'urlOverrides' | 'stepBudget'> {
  /** The resolved budget. @default the graph's step_budget, else DEFAULT_STEP_BUDGET */
  stepBudget?: number;
}

export class LoopRunner {
  private readonly urlOverrides: UrlOverrides | undefined;
  /** The executor of the latest run, kept for inspection (steps, errors, metrics so far). */
  lastExecutor: GraphExecutor | undefined;

  constructor(options: LoopRunnerOptions = {}) {
    this.urlOverrides = options.urlOverrides;
  }

  run(graph: ValidatedGraph, options: LoopRunOptions): Promise<ExecutorResult> {
    const executor = new GraphExecutor({
      ...options,
      graph,
      stepBudget: options.stepBudget ?? graph.spec.step_budget ?? DEFAULT_STEP_BUDGET,
      ...(this.urlOverrides ? { urlOverrides: this.urlOverrides } : {}),
    });
    this.lastExecutor = executor;
    return executor.run();
  }
}
