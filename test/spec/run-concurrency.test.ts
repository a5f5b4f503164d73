/**
 * runConcurrency: the in-flight default follows the graph's placement, every cap below what a
 * run asked is named, each worker's share adds up to the run's count, and a node's own
 * concurrency limit left unset follows the run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphSpec } from '../../src/core/types.js';
import { BadInputError } from '../../src/errors.js';
import { validateGraph } from '../../src/graph/graph.js';
import { placedNodesets } from '../../src/nodeset-registry/placement.js';
import { NodesetRegistry } from '../../src/nodeset-registry/registry.js';
import { parseRunInput } from '../../src/spec/parse-run-spec.js';
import { DEFAULT_IO_IN_FLIGHT, describeConcurrency, episodesOfWorker, runConcurrency } from '../../src/spec/run-concurrency.js';
import { RUN_LIMITS } from '../../src/spec/run-spec.js';
import { BUILTIN_GRAPHS_DIR } from '../../src/paths.js';

let registry: NodesetRegistry;
beforeAll(async () => {
  registry = await NodesetRegistry.scan();
});
afterAll(() => registry.close());

const builtin = (name: string): GraphSpec => JSON.parse(readFileSync(join(BUILTIN_GRAPHS_DIR, `${name}.json`), 'utf8')) as GraphSpec;

function concurrencyOf(graph: GraphSpec, spec: { workerCount: number; episodeCount: number; maxInFlight?: number; repeats?: number }) {
  const validated = validateGraph(graph, registry);
  return runConcurrency(spec, validated, placedNodesets(validated, registry));
}

describe('runConcurrency', () => {
  it('defaults an all-I/O graph (qa_llm) to many episodes per worker, a replicated env (gridnav) to one per worker', () => {
    const qa = concurrencyOf(builtin('qa_llm'), { workerCount: 2, episodeCount: 1000 });
    expect(qa).toMatchObject({
      workers: 2,
      maxInFlight: DEFAULT_IO_IN_FLIGHT,
      perWorker: DEFAULT_IO_IN_FLIGHT / 2,
      asked: null,
      limits: [],
    });
    const grid = concurrencyOf(builtin('gridnav_planner'), { workerCount: 4, episodeCount: 1000 });
    expect(grid).toMatchObject({ workers: 4, maxInFlight: 4, perWorker: 1, asked: null, limits: [] });
    expect(grid.basis).toContain('env_gridnav is replicated');
  });

  it('names every cap below what the run asked: a replicated env, the play count, a node’s own lower limit', () => {
    const grid = concurrencyOf(builtin('gridnav_planner'), { workerCount: 4, episodeCount: 1000, maxInFlight: 64 });
    expect(grid.maxInFlight).toBe(4);
    expect(grid.limits).toEqual([expect.objectContaining({ name: 'env_gridnav', limit: 4 })]);

    const few = concurrencyOf(builtin('qa_llm'), { workerCount: 1, episodeCount: 10, repeats: 3, maxInFlight: 4096 });
    expect(few.maxInFlight).toBe(30);
    expect(few.limits).toEqual([{ name: 'plays', limit: 30, reason: 'the run has 30 play(s)' }]);

    // Past the connections one host process takes, the run says calls to such a host wait for one.
    const wide = concurrencyOf(builtin('qa_llm'), { workerCount: 1, episodeCount: 80, repeats: 20, maxInFlight: 1024 });
    expect(wide.maxInFlight).toBe(1024);
    expect(wide.limits).toEqual([expect.objectContaining({ name: 'host connections', limit: 256 })]);

    const capped = builtin('qa_llm');
    const llm = capped.nodes.find((n) => n.id === 'llm')!;
    llm.config = { ...llm.config, max_concurrency: 16 };
    const c = concurrencyOf(capped, { workerCount: 1, episodeCount: 500, maxInFlight: 256 });
    expect(c.maxInFlight).toBe(256);
    expect(c.limits).toEqual([expect.objectContaining({ name: 'llm.max_concurrency', limit: 16 })]);
    expect(describeConcurrency(c)).toContain('bound by llm.max_concurrency = 16');
  });

  it('splits the in-flight count over the workers exactly, each at least one', () => {
    for (const [workers, inFlight] of [
      [1, 1],
      [3, 1000],
      [7, 7],
      [64, 4096],
      [5, 12],
    ] as const) {
      const shares = Array.from({ length: workers }, (_, k) => episodesOfWorker({ workers, maxInFlight: inFlight }, k));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(inFlight);
      expect(Math.min(...shares)).toBeGreaterThanOrEqual(1);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }
  });
});

describe('the maxInFlight field', () => {
  it('takes up to the limit (≥ 4,096) and refuses fewer than the workers or more than the limit, naming the field', () => {
    expect(RUN_LIMITS.maxInFlight).toBeGreaterThanOrEqual(4096);
    expect(parseRunInput({ graphName: 'qa_llm', episodeCount: 1, maxInFlight: 4096 }).maxInFlight).toBe(4096);
    const refused = (raw: object) => {
      try {
        parseRunInput(raw, { maxInFlight: '--max-in-flight' });
      } catch (err) {
        expect(err).toBeInstanceOf(BadInputError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ graphName: 'qa_llm', episodeCount: 1, workerCount: 8, maxInFlight: 4 })).toMatch(
      /--max-in-flight.*at least workerCount \(8\)/,
    );
    expect(refused({ graphName: 'qa_llm', episodeCount: 1, maxInFlight: RUN_LIMITS.maxInFlight + 1 })).toMatch(/--max-in-flight/);
    expect(refused({ graphName: 'qa_llm', episodeCount: 1, maxInFlight: 0 })).toMatch(/--max-in-flight/);
  });
});
