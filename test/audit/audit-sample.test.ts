/** The audit's sample: seeded from the run id (the same every time), within the eligible episodes, ascending. */
import { describe, expect, it } from 'vitest';
import { auditSample } from '../../src/audit/audit-sample.js';

describe('auditSample', () => {
  const eligible = Array.from({ length: 100 }, (_, i) => i).filter((i) => i % 7 !== 3);

  it('is the same for the same run id, another for another, sorted, distinct and eligible', () => {
    const a = auditSample('20261130_101500', eligible, 16);
    expect(auditSample('20261130_101500', [...eligible].reverse(), 16)).toEqual(a);
    expect(a).toHaveLength(16);
    expect(new Set(a).size).toBe(16);
    expect([...a].sort((x, y) => x - y)).toEqual(a);
    for (const i of a) expect(eligible).toContain(i);
    expect(auditSample('20261130_101501', eligible, 16)).not.toEqual(a);
  });

  it('takes every eligible episode when asked for more', () => {
    expect(auditSample('20261130_101500', [5, 2, 9], 16)).toEqual([2, 5, 9]);
  });
});
