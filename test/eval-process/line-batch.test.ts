/** The eval process's per-episode log lines: written together, in order, none lost at a flush. */
import { describe, expect, it } from 'vitest';
import { lineBatch } from '../../src/eval-process/line-batch.js';

describe('lineBatch', () => {
  it('writes queued lines in one write at the timer or at flush, in order, and nothing twice', async () => {
    const writes: string[] = [];
    const batch = lineBatch((t) => writes.push(t), 5);
    batch.push('a\n');
    batch.push('b\n');
    expect(writes).toEqual([]);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (writes.length > 0) {
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    expect(writes).toEqual(['a\nb\n']);
    batch.push('c\n');
    batch.flush();
    batch.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });
});
