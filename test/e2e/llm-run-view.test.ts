/**
 * A model-backed run on the dashboard: the run page's report (accuracy over the scored
 * episodes, infrastructure failures apart, per-class table, confusion matrix, top failures
 * and successes linking to their episodes, endings, cost per episode) and the episode
 * drawer's conversation (messages, the model's tool call, the tool's result, the final answer,
 * tokens, latency, cached and retry marks). The run directory is written by the test:
 * summary.json, the episode's events.jsonl and report.json, as an eval process leaves them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { episodeDir, runsRoot } from '../../src/store/run-dir.js';
import { expectAccessible } from './axe.js';
import { type Session, sessionPerTest } from './harness.js';
import { writeSyntheticRun } from './synthetic-run.js';

const RUN_ID = '20260102_090000';

const calc = { id: 'call_1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"(17 + 25) * 3"}' } };

/** Episode 1's history: a model call that asks for the calculator, the tool call, a retried model call that answers. */
const EVENTS = [
  {
    type: 'llm_call',
    step: 0,
    nodeId: 'llm',
    model: 'stand-in-model',
    call: 1,
    messages: [
      { role: 'system', content: 'Solve the arithmetic word problem.' },
      { role: 'user', content: 'Ana has 17 boxes of 3 pens and 25 more boxes. How many pens?' },
    ],
    response: { role: 'assistant', content: null, tool_calls: [calc] },
    tool_calls: [calc],
    finish_reason: 'tool_calls',
    usage: { prompt_tokens: 120, completion_tokens: 18 },
    latency_ms: 210,
    cached: true,
    retries: 0,
  },
  {
    type: 'tool_call',
    step: 0,
    nodeId: 'tools',
    tool_call_id: 'call_1',
    name: 'calculator',
    arguments: '{"expression":"(17 + 25) * 3"}',
    exit_code: 0,
    stdout: '126',
    stderr: '',
    duration_ms: 41,
    timed_out: false,
  },
  { type: 'infra', kind: 'retry', step: 1, nodeId: 'llm', attempt: 1, status: 429, error: 'rate limited', delay_ms: 500 },
  {
    type: 'llm_call',
    step: 1,
    nodeId: 'llm',
    model: 'stand-in-model',
    call: 2,
    prior_messages: 3,
    messages: [{ role: 'tool', tool_call_id: 'call_1', content: '126' }],
    response: { role: 'assistant', content: '126' },
    finish_reason: 'stop',
    usage: { prompt_tokens: 150, completion_tokens: 3 },
    latency_ms: 190,
    cached: false,
    retries: 1,
  },
];

const brief = (index: number, score: number, answer: string, target: string) => ({
  index,
  episodeId: `sentiment/test/s${index}`,
  status: 'COMPLETED',
  score,
  answer,
  extracted: answer,
  target,
  explanation: score === 1 ? 'matches' : `expected ${target}`,
});

const REPORT = {
  runId: RUN_ID,
  graphName: 'qa_llm',
  status: 'COMPLETED',
  episodeCount: 6,
  episodesDone: 6,
  metrics: [
    { name: 'score', mean: 0.6, count: 5, stderr: 0.245, min: 0, max: 1, ci95Low: 0.1, ci95High: 0.95, ciMethod: 'wilson' },
    { name: 'llm_calls', mean: 1.5, count: 6, stderr: 0.2, min: 1, max: 2 },
  ],
  endings: [
    { status: 'COMPLETED', count: 5, rate: 5 / 6 },
    { status: 'INFRA_ERROR', count: 1, rate: 1 / 6 },
  ],
  infrastructureFailures: { count: 1, rate: 1 / 6 },
  failed: 0,
  retried: { episodes: 1, retries: 1 },
  scorers: [
    {
      scorer: 'exact',
      rescored: false,
      count: 5,
      mean: 0.6,
      stderr: 0.245,
      correct: 3,
      accuracy: 0.6,
      unscored: 0,
      classification: {
        count: 5,
        accuracy: 0.6,
        macroF1: 0.5,
        perClass: [
          { label: 'negative', precision: 1, recall: 0.5, f1: 0.667, support: 2 },
          { label: 'positive', precision: 0.667, recall: 0.667, f1: 0.667, support: 3 },
        ],
        confusion: {
          labels: ['negative', 'positive'],
          predicted: ['negative', 'positive', '(other)'],
          matrix: [
            [1, 1, 0],
            [0, 2, 1],
          ],
        },
      },
    },
  ],
  worst: [brief(4, 0, 'maybe', 'positive'), brief(2, 0, 'positive', 'negative')],
  best: [brief(0, 1, 'negative', 'negative'), brief(1, 1, 'positive', 'positive')],
  perEpisode: [
    { metric: 'llm_calls', mean: 1.5, total: 9, count: 6 },
    { metric: 'prompt_tokens', mean: 180, total: 1080, count: 6 },
    { metric: 'durationMs', mean: 640, total: 3840, count: 6 },
  ],
};

const sessions = sessionPerTest();

function openWithRun(): Promise<Session> {
  return sessions.open({
    prepare: async (out) => {
      await writeSyntheticRun(out, { runId: RUN_ID, episodeCount: 6, workerCount: 2 });
      const runDir = join(runsRoot(out), RUN_ID);
      const ep = episodeDir(runDir, 1);
      await mkdir(ep, { recursive: true });
      await writeFile(join(ep, 'events.jsonl'), EVENTS.map((e) => JSON.stringify(e)).join('\n') + '\n');
      await writeFile(join(runDir, 'report.json'), JSON.stringify(REPORT, null, 2));
    },
  });
}

describe('a model-backed run on the dashboard', { timeout: 60_000 }, () => {
  it('shows the report: accuracy with infrastructure failures apart, the confusion matrix, and links to the extremes', async () => {
    const s = await openWithRun();
    const { page, url } = s;
    await page.goto(`${url}#/runs/${RUN_ID}`);
    await page.waitForSelector('[data-testid=run-report]');
    expect(await page.textContent('[data-testid=report-accuracy]')).toMatch(/exact accuracy 60 % over 5 scored episodes/);
    expect(await page.textContent('[data-testid=report-infra]')).toMatch(/infrastructure failures 1 \(16\.7 %\)/);

    const matrix = await page.$$eval('[data-testid=confusion-matrix] tbody tr', (rows) =>
      rows.map((r) => Array.from(r.children).map((c) => c.textContent?.trim())),
    );
    expect(matrix).toEqual([
      ['negative', '1', '1', '0'],
      ['positive', '0', '2', '1'],
    ]);
    expect(await page.$$eval('[data-testid=confusion-matrix] thead th', (hs) => hs.map((h) => h.textContent?.trim()))).toEqual([
      '',
      'negative',
      'positive',
      '(other)',
    ]);
    expect(await page.$$eval('[data-testid=report-per-class] tbody th', (hs) => hs.map((h) => h.textContent))).toEqual([
      'negative',
      'positive',
    ]);
    expect(await page.textContent('[data-testid=report-metrics]')).toMatch(/0\.1 … 0\.95/);
    expect(await page.$$eval('[data-testid=report-endings] th', (hs) => hs.map((h) => h.textContent))).toEqual([
      'completed',
      'infra error',
    ]);
    expect(await page.textContent('[data-testid=report-costs]')).toMatch(/prompt_tokens\s*180\s*1080/);
    await expectAccessible(page, 'the run page with its report');
    await s.screenshot('llm-run-report');

    // The worst episode's link opens it in the drawer.
    await page.click('[data-testid=report-worst] a[href$="/episodes/4"]');
    await page.waitForSelector('[data-testid=episode-drawer][aria-label="episode 4"] .ep-summary');
    expect(await page.evaluate(() => location.hash)).toBe(`#/runs/${RUN_ID}/episodes/4`);
  });

  it("shows an episode's event history as a conversation with its tool call, tokens, latency, cache and retry marks", async () => {
    const s = await openWithRun();
    const { page, url } = s;
    await page.goto(`${url}#/runs/${RUN_ID}/episodes/1`);
    await page.waitForSelector('[data-testid=conversation] .chat-msg');
    const roles = await page.$$eval('[data-testid=conversation] .chat > li', (lis) =>
      lis.map((li) => li.getAttribute('data-role') ?? li.getAttribute('data-testid')),
    );
    // The tool result is shown once, from the tool node's event, not again as the next call's input.
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'chat-notice', 'assistant']);
    expect(await page.textContent('[data-testid=tool-call-request]')).toContain('calculator');
    expect(await page.textContent('[data-testid=tool-call-request]')).toContain('(17 + 25) * 3');
    expect(await page.textContent('[data-testid=tool-result] pre')).toBe('126');
    expect(await page.textContent('[data-testid=chat-notice]')).toMatch(/retry 1 after 429 rate limited \(waited 500 ms\)/);
    expect(await page.$$eval('[data-testid=badge-cached]', (b) => b.length)).toBe(1);
    expect(await page.textContent('[data-testid=badge-retries]')).toBe('1 retry');
    const head = await page.textContent('[data-testid=conversation] h3');
    expect(head).toMatch(/2 model calls · 270 → 21 tokens · 400 ms · 1 tool call · 1 cached · 1 retry/);
    const last = page.locator('[data-testid=conversation] .chat-assistant').last();
    expect(await last.locator('.chat-text').textContent()).toBe('126');
    await expectAccessible(page, 'the episode drawer with a conversation');
    await s.screenshot('llm-episode-conversation');

    // An episode without events has no conversation section.
    await page.goto(`${url}#/runs/${RUN_ID}/episodes/2`);
    await page.waitForSelector('[data-testid=episode-drawer][aria-label="episode 2"] .ep-summary');
    // The events are asked for once the record is shown: wait for that answer.
    await page.waitForSelector('[data-testid=conversation-loading]', { state: 'detached' });
    expect(await page.$('[data-testid=conversation]')).toBeNull();
  });
});
