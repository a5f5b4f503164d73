/** `evalctl episode`: one episode with real hosts, its record printed. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIST_DIR } from '../../src/paths.js';
import type { EpisodeRecord } from '../../src/store/types.js';
import { startOpenAIStub } from '../support/openai-stub.js';

const CLI = join(DIST_DIR, 'main.js');
let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'cli-episode-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const evalctl = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false, env: { ACTIVE_WORKSPACE_DIR: '' } });

describe('evalctl episode', () => {
  it('gridnav_planner --index 3 --json twice gives byte-identical metrics, the same as episode 3 of a run', async () => {
    const [a, b] = await Promise.all([
      evalctl(['episode', 'gridnav_planner', '--index', '3', '--json']),
      evalctl(['episode', 'gridnav_planner', '--index', '3', '--json']),
    ]);
    expect(a.exitCode).toBe(0);
    expect(b.exitCode).toBe(0);
    const ra = JSON.parse(a.stdout) as EpisodeRecord;
    const rb = JSON.parse(b.stdout) as EpisodeRecord;
    expect(ra).toMatchObject({ index: 3, episodeId: 'standard/val/3', status: 'COMPLETED' });
    expect(Object.keys(ra.metrics).sort()).toEqual(['distance_to_goal', 'spl', 'steps', 'success']);
    expect(JSON.stringify(ra.metrics)).toBe(JSON.stringify(rb.metrics));
    expect(ra.seed).toBe(rb.seed);

    const run = await evalctl(['run', 'gridnav_planner', '--episodes', '4', '--workers', '2', '--json', '--outputs', tmp]);
    expect(run.exitCode).toBe(0);
    const fromRun = (JSON.parse(run.stdout) as { episodes: EpisodeRecord[] }).episodes[3]!;
    expect(JSON.stringify(fromRun.metrics)).toBe(JSON.stringify(ra.metrics));
    expect(fromRun.seed).toBe(ra.seed);
  });

  it('prints a readable record without --json, and refuses a bad index', async () => {
    const r = await evalctl(['episode', 'gridnav_planner', '--index', '1', '--set', 'agent.epsilon=0']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^episode 1 \(standard\/val\/1\): COMPLETED/);
    expect(r.stdout).toMatch(/^\s+spl\s+1$/m);
    const bad = await evalctl(['episode', 'gridnav_planner', '--index=-2']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim()).toBe('evalctl: --index must be an integer ≥ 0, got -2');
    const missing = await evalctl(['episode', 'gridnav_planner']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr.trim()).toBe('evalctl: --index I is required');
  });

  it('qa_llm --json: the sample (input, target, answer, extracted, each score) before the transcript', async () => {
    const stub = await startOpenAIStub();
    try {
      const env = {
        ACTIVE_WORKSPACE_DIR: '',
        OPENAI_MODEL: 'stand-in-model',
        OPENAI_BASE_URL: stub.baseURL,
        OPENAI_API_KEY: 'none',
        EVAL_LLM_CACHE_DIR: '',
      };
      const r = await execa(process.execPath, [CLI, 'episode', 'qa_llm', '--index', '0', '--json'], { reject: false, env });
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as EpisodeRecord & { sample: Record<string, unknown>; transcript: Array<{ type: string }> };
      const score = out.scores![0]!;
      expect(out.sample).toEqual({
        input: out.instruction,
        target: String(score.target),
        answer: score.answer,
        extracted: score.extracted,
        scores: out.scores,
      });
      expect(typeof out.sample.input).toBe('string');
      expect(score.explanation.length).toBeGreaterThan(0);
      expect(out.transcript.map((e) => e.type)).toContain('llm_call');
      expect(Object.keys(out).slice(-2)).toEqual(['sample', 'transcript']);
    } finally {
      await stub.close();
    }
  });
});
