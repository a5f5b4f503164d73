/**
 * A `pattern` that passes the static check yet backtracks catastrophically on one answer, run
 * by the real CLI (a real eval process, the shared score host): that episode ends ERROR naming
 * the pattern, and the host is free again for the next episodes, which score as usual.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';

const CLI = join(DIST_DIR, 'main.js');
let tmp: string;

// Episode 1 answers 40 a's and a "!": 2^40 ways for ^(a|a)*$ to fail; the others answer a few a's.
const HANDLERS = `export default {
  functions: { ask: ({ ctx }) => ({ answer: ctx.episodeIndex === 1 ? 'a'.repeat(40) + '!' : 'a'.repeat(5) }) },
};
`;
const MANIFEST = {
  name: 'answers_fixture',
  version: '1.0.0',
  description: 'Test nodeset: a fixed answer per episode, one of them a trap for a backtracking pattern.',
  parallelism: 'replicated',
  module: 'handlers.mjs',
  functions: [{ name: 'ask', inputs: [], outputs: [{ name: 'answer' }] }],
  resources: { ramMb: 40 },
};
const GRAPH = {
  name: 'slow_pattern',
  step_budget: 1,
  nodes: [
    { id: 'agent', type: 'answers_fixture__ask' },
    { id: 'scorer', type: 'score__pattern', config: { pattern: '^(a|a)*$' } },
    { id: 'result', type: 'graphOut' },
  ],
  edges: [
    { from: 'agent.answer', to: 'scorer.answer' },
    { from: 'scorer.score', to: 'result.score' },
    { from: 'scorer.metrics', to: 'result.metrics' },
  ],
};

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pattern-timeout-'));
  const nodeset = join(tmp, 'ws', 'graph_nodes', 'answers_fixture');
  await mkdir(nodeset, { recursive: true });
  await mkdir(join(tmp, 'ws', 'graphs'), { recursive: true });
  await writeFile(join(nodeset, 'manifest.json'), JSON.stringify(MANIFEST));
  await writeFile(join(nodeset, 'handlers.mjs'), HANDLERS);
  await writeFile(join(tmp, 'ws', 'graphs', 'slow_pattern.json'), JSON.stringify(GRAPH));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('a pattern that backtracks catastrophically on one answer', () => {
  it('ends that episode ERROR naming the pattern; the run goes on and scores the others', async () => {
    // The per-call limit is well above the pattern's own 1 s limit: the scorer stops the search, not the executor.
    const r = await execa(
      process.execPath,
      [
        CLI,
        'run',
        'slow_pattern',
        '--episodes',
        '4',
        '--workers',
        '1',
        '--per-call-timeout',
        '20',
        '--outputs',
        join(tmp, 'out'),
        '--json',
      ],
      { reject: false, env: { ACTIVE_WORKSPACE_DIR: join(tmp, 'ws') } },
    );
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary.status).toBe('COMPLETED');
    expect(summary.episodes.map((e) => e.status)).toEqual(['COMPLETED', 'ERROR', 'COMPLETED', 'COMPLETED']);
    const stopped = summary.episodes[1]!;
    const why =
      'scorer "pattern": config "pattern" /^(a|a)*$/ searched the answer (41 characters) for more than 1000 ms and was stopped: it backtracks catastrophically on this text; rewrite it so that no two alternatives or quantifiers can match the same text (as in (a|a)*)';
    expect(stopped.nodeErrors).toEqual([{ nodeId: 'scorer', step: 0, message: why }]);
    expect(stopped.error).toContain(why);
    expect(stopped.metrics).toEqual({});
    expect(summary.episodes[2]!.metrics).toEqual({ score: 1, correct: true });
    // The errored play counts, unscored, at the scorer's declared 0: the run says so in `imputed`.
    expect(summary.aggregateMetrics.find((m) => m.name === 'correct')).toMatchObject({
      mean: 0.75,
      count: 4,
      excluded: {},
      imputed: { ERROR: 1 },
      imputedValue: 0,
    });
  }, 60_000);
});
