/**
 * Cancels as users make them, at varying moments: through the API (the scheduler sends SIGTERM
 * to the eval process's group) and with Ctrl-C on `evalctl run` (the terminal sends SIGINT to
 * the whole foreground group). Whatever the moment, the run ends CANCELLED with no error, no
 * in-flight episode ends CRASHED, the aggregates count the finished episodes only, and no
 * process of the run is left. bench/cancel-soak.ts runs the same drills many more times.
 */
import { describe, expect, it } from 'vitest';
import { apiCancelDrill, describeDrill, sigintDrill, type DrillResult } from '../bench/cancel-drill.js';

/** Moments: right after the start, and after 1–3 finished episodes, with a varying extra delay. */
const plan = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ workers: i % 2 === 0 ? 2 : 4, moment: { afterEpisodes: i % 4, delayMs: (i * 37) % 150 } }));

function expectCleanCancel(r: DrillResult): void {
  const what = describeDrill(r);
  expect({ status: r.status, error: r.error }, what).toEqual({ status: 'CANCELLED', error: null });
  expect(r.crashed, what).toBe(0);
  expect(r.aggregatesFinishedOnly, what).toBe(true);
  expect(r.leftovers, what).toEqual([]);
}

describe('cancel at any moment', () => {
  it('through the API: 2- and 4-worker runs end CANCELLED with no CRASHED episode', async () => {
    const results = await apiCancelDrill({ plan: plan(4) });
    for (const r of results) expectCleanCancel(r);
  }, 120_000);

  it('Ctrl-C of `evalctl run` (SIGINT to its process group): CANCELLED, no CRASHED episode, exit 130', async () => {
    const results = await sigintDrill({ plan: plan(3) });
    for (const r of results) {
      expectCleanCancel(r);
      expect(r.exitCode, describeDrill(r)).toBe(130);
    }
  }, 120_000);
});
