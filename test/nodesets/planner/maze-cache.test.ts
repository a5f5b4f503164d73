import { describe, expect, it } from 'vitest';
import { distanceMap, gridFromRows } from '../../../src/nodesets/env_gridnav/grid.js';
import { MAZE_CACHE_SIZE, mazeOf } from '../../../src/nodesets/planner/maze-cache.js';

const ROWS = ['#####', '#...#', '#.#.#', '#...#', '#####'];

/** A distinct maze per `k`: the free cell at row 1 moves along a wider corridor. */
const rowsFor = (k: number): string[] => ['#'.repeat(k + 3), `#${'.'.repeat(k + 1)}#`, '#'.repeat(k + 3)];

describe('mazeOf', () => {
  it('gives the grid and distances the uncached functions give', () => {
    const maze = mazeOf(ROWS);
    expect(maze.grid).toEqual(gridFromRows(ROWS));
    expect([...maze.distancesTo([3, 3])]).toEqual([...distanceMap(gridFromRows(ROWS), [3, 3])]);
    expect([...maze.distancesTo([1, 1])]).toEqual([...distanceMap(gridFromRows(ROWS), [1, 1])]);
    // A goal outside the grid: every cell unreachable, as distanceMap says.
    expect([...maze.distancesTo([9, 9])]).toEqual([...distanceMap(gridFromRows(ROWS), [9, 9])]);
  });

  it('works a maze out once while it is in use: the same rows in a later step give the same maze and map', () => {
    const a = mazeOf([...ROWS]);
    const b = mazeOf([...ROWS]);
    expect(b).toBe(a);
    expect(b.distancesTo([3, 3])).toBe(a.distancesTo([3, 3]));
    // Rows of 0/1 numbers are another spelling of a maze, kept apart from the text.
    const numeric = mazeOf(ROWS.map((r) => [...r].map((ch) => (ch === '#' ? 1 : 0))));
    expect(numeric).not.toBe(a);
    expect(numeric.grid).toEqual(a.grid);
  });

  it('keeps at most MAZE_CACHE_SIZE mazes, dropping the least recently used', () => {
    const first = mazeOf(rowsFor(0));
    const one = mazeOf(rowsFor(1));
    for (let k = 2; k < MAZE_CACHE_SIZE; k++) mazeOf(rowsFor(k));
    expect(mazeOf(rowsFor(0))).toBe(first); // used again: now the most recent
    mazeOf(rowsFor(MAZE_CACHE_SIZE));
    expect(mazeOf(rowsFor(0))).toBe(first);
    // The least recent when one more came: dropped, and made anew.
    const again = mazeOf(rowsFor(1));
    expect(again).not.toBe(one);
    expect(again.grid).toEqual(one.grid);
    for (let k = 2; k <= MAZE_CACHE_SIZE + 1; k++) mazeOf(rowsFor(k + MAZE_CACHE_SIZE));
    expect(mazeOf(rowsFor(0))).not.toBe(first);
  });

  it('still refuses a bad grid, naming the row, and does not keep it', () => {
    expect(() => mazeOf(['###', '#x#', '###'])).toThrow(/row 1 column 1/);
    expect(() => mazeOf(['###', '#x#', '###'])).toThrow(/row 1 column 1/);
    expect(() => mazeOf(['###', '##'])).toThrow(/row 1 has 2 cells, expected 3/);
  });
});
