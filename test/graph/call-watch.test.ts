import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallWatch, type WatchedCall } from '../../src/graph/call-watch.js';

describe('CallWatch', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const live = () => true;

  it('reports each call still in flight at its own limit, once, and not a call that settled in time', () => {
    const late: string[] = [];
    const watch = new CallWatch(100, (c) => late.push(`${c.nodeId}@${c.step}`));
    const a = watch.start('a', 0, live);
    vi.advanceTimersByTime(30);
    watch.start('b', 0, live);
    vi.advanceTimersByTime(20);
    const c = watch.start('c', 1, live);
    watch.done(a);
    vi.advanceTimersByTime(49);
    expect(late).toEqual([]);
    // b passes its limit 130 ms after the first start; c at 150 ms.
    vi.advanceTimersByTime(31);
    expect(late).toEqual(['b@0']);
    vi.advanceTimersByTime(19);
    expect(late).toEqual(['b@0']);
    vi.advanceTimersByTime(1);
    expect(late).toEqual(['b@0', 'c@1']);
    vi.advanceTimersByTime(1000);
    expect(late).toEqual(['b@0', 'c@1']);
    watch.done(c);
  });

  it('keeps one timer however many calls are in flight', () => {
    const watch = new CallWatch(100, () => {});
    const calls: WatchedCall[] = [];
    for (let i = 0; i < 50; i++) calls.push(watch.start(`n${i}`, i, live));
    expect(vi.getTimerCount()).toBe(1);
    for (const c of calls) watch.done(c);
    watch.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not report a call whose iteration already ended, nor anything after close', () => {
    const late: string[] = [];
    const watch = new CallWatch(10, (c) => late.push(c.nodeId));
    watch.start('ended', 0, () => false);
    vi.advanceTimersByTime(10);
    expect(late).toEqual([]);
    watch.start('closed', 1, live);
    watch.close();
    watch.close();
    vi.advanceTimersByTime(100);
    expect(late).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('arms again for a call that started after the timer was set for an earlier one', () => {
    const late: string[] = [];
    const watch = new CallWatch(100, (c) => late.push(c.nodeId));
    watch.done(watch.start('quick', 0, live));
    vi.advanceTimersByTime(60);
    watch.start('slow', 1, live);
    vi.advanceTimersByTime(40);
    expect(late).toEqual([]);
    vi.advanceTimersByTime(59);
    expect(late).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(late).toEqual(['slow']);
  });
});
