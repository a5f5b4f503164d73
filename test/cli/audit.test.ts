/** `evalctl audit`'s verdict text: a re-play at the run's own worker count is said to check replay only. */
import { describe, expect, it } from 'vitest';
import { renderAudit, sameWorkersNote } from '../../src/cli/audit.js';

const answer = (workerCount: number, originalWorkerCount: number, status: 'PASSED' | 'FAILED' | 'ERROR' | 'RUNNING' = 'PASSED') => ({
  status,
  auditRunId: 'r2',
  sample: [0, 3],
  workerCount,
  originalWorkerCount,
  episodesCompared: status === 'PASSED' ? 2 : 0,
  notes: ['the project version changed since the run (0.1.0 → 0.2.0)'],
  diffs: [],
  error: status === 'ERROR' ? { code: 'CANCELLED', message: 'the audit was cancelled' } : null,
});

describe('evalctl audit verdict', () => {
  it('says nothing of the worker count when the re-play used another than the run', () => {
    expect(sameWorkersNote(answer(1, 4))).toBeNull();
    expect(renderAudit('r1', answer(1, 4))).toBe(
      'determinism: verified at 1 worker(s) on 2 episode(s) of run r1\nnote: the project version changed since the run (0.1.0 → 0.2.0)\n',
    );
  });

  it("notes that a re-play at the run's own worker count checks replay, not worker-count independence, before the other notes", () => {
    const lines = renderAudit('r1', answer(2, 2)).trimEnd().split('\n');
    expect(lines).toEqual([
      'determinism: verified at 2 worker(s) on 2 episode(s) of run r1',
      `note: ${sameWorkersNote(answer(2, 2))}`,
      'note: the project version changed since the run (0.1.0 → 0.2.0)',
    ]);
    expect(lines[1]).toMatch(
      /^note: re-played at the run's own worker count \(2\): this checks that its episodes replay .* not that the worker count/,
    );
    expect(renderAudit('r1', answer(2, 2, 'RUNNING'))).toContain("note: re-played at the run's own worker count (2)");
  });

  it('leaves the note out when there is no verdict', () => {
    expect(renderAudit('r1', answer(2, 2, 'ERROR'))).not.toContain('worker count');
  });
});
