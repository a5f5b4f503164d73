import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { whenAborted } from '../../src/host/abort-fanout.js';

describe('whenAborted', () => {
  it('puts one listener on the signal however many calls wait on it, and calls those still waiting when it aborts', () => {
    const controller = new AbortController();
    const called: number[] = [];
    const forgets = Array.from({ length: 10 }, (_, i) => whenAborted(controller.signal, () => called.push(i)));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    for (const i of [1, 3, 5, 7, 9]) forgets[i]!();
    forgets[1]!();
    controller.abort(new Error('stop'));
    expect(called).toEqual([0, 2, 4, 6, 8]);
    controller.abort();
    expect(called).toEqual([0, 2, 4, 6, 8]);
  });

  it('keeps signals apart', () => {
    const a = new AbortController();
    const b = new AbortController();
    const called: string[] = [];
    whenAborted(a.signal, () => called.push('a'));
    whenAborted(b.signal, () => called.push('b'));
    b.abort();
    expect(called).toEqual(['b']);
  });
});
