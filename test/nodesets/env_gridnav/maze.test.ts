import { describe, expect, it } from 'vitest';
import { createPrng } from '../../../src/core/prng.js';
import { CATALOG, DATASETS, episodePrng } from '../../../src/nodesets/env_gridnav/datasets.js';
import {
  distanceMap,
  gridFromRows,
  gridToStrings,
  optimalActionCount,
  shortestPath,
  UNREACHABLE,
} from '../../../src/nodesets/env_gridnav/grid.js';
import { generateMaze } from '../../../src/nodesets/env_gridnav/maze.js';
import { createEpisode } from '../../../src/nodesets/env_gridnav/episode.js';
import { resolveEpisode } from '../../../src/nodesets/_lib/episode-address.js';

describe('maze generation', () => {
  it('gives the same maze, start, heading and goal for the same (dataset, split, index)', () => {
    for (const dataset of Object.keys(DATASETS)) {
      const a = generateMaze(episodePrng({ dataset, split: 'val', index: 7 }), DATASETS[dataset]!);
      const b = generateMaze(episodePrng({ dataset, split: 'val', index: 7 }), DATASETS[dataset]!);
      expect(gridToStrings(b.grid)).toEqual(gridToStrings(a.grid));
      expect([b.start, b.startHeading, b.goal]).toEqual([a.start, a.startHeading, a.goal]);
    }
  });

  it('gives different mazes for different indices and splits', () => {
    const rows = (split: 'train' | 'val', index: number) =>
      gridToStrings(generateMaze(episodePrng({ dataset: 'standard', split, index }), DATASETS.standard!).grid).join('\n');
    const seen = new Set([rows('val', 0), rows('val', 1), rows('val', 2), rows('train', 0)]);
    expect(seen.size).toBe(4);
  });

  it('makes every free cell reachable, the goal apart from the start, on 50 episodes of each dataset', () => {
    for (const [dataset, spec] of Object.entries(DATASETS)) {
      for (let index = 0; index < 50; index++) {
        const maze = generateMaze(episodePrng({ dataset, split: 'test', index }), spec);
        expect([maze.grid.rows, maze.grid.cols]).toEqual([2 * spec.roomRows + 1, 2 * spec.roomCols + 1]);
        const dist = distanceMap(maze.grid, maze.start);
        let mismatches = 0;
        for (let i = 0; i < dist.length; i++) if ((dist[i] === UNREACHABLE) !== (maze.grid.walls[i] === 1)) mismatches++;
        expect(mismatches).toBe(0);
        const goalDistance = dist[maze.goal[0] * maze.grid.cols + maze.goal[1]]!;
        expect(goalDistance).toBeGreaterThanOrEqual(Math.min(spec.minGoalDistance, 1));
        expect(maze.grid.walls[maze.start[0] * maze.grid.cols + maze.start[1]]).toBe(0);
      }
    }
  });

  it('keeps the outer wall closed', () => {
    const maze = generateMaze(createPrng(123), DATASETS.mini!);
    const rows = gridToStrings(maze.grid);
    expect(rows[0]).toMatch(/^#+$/);
    expect(rows[rows.length - 1]).toMatch(/^#+$/);
    for (const row of rows) expect(row[0] + row[row.length - 1]!).toBe('##');
  });

  it('does not depend on the run seed: the episode is addressed by dataset, split and index only', () => {
    const a = createEpisode(resolveEpisode(CATALOG, { dataset: 'mini', split: 'val', episode: 3 }));
    const b = createEpisode(resolveEpisode(CATALOG, { dataset: 'mini', split: 'val', episode: '3' }));
    expect(b.rows).toEqual(a.rows);
  });
});

describe('breadth-first search', () => {
  const grid = gridFromRows(['#######', '#.....#', '#.###.#', '#...#.#', '###.#.#', '#.....#', '#######']);

  it('measures geodesic distance around walls', () => {
    const dist = distanceMap(grid, [1, 1]);
    expect(dist[3 * 7 + 3]).toBe(4); // (1,1)→(2,1)→(3,1)→(3,2)→(3,3)
    expect(dist[5 * 7 + 5]).toBe(8); // down the left or along the top and down the right: both 8
    expect(dist[5 * 7 + 1]).toBe(8); // (3,3)→(4,3)→(5,3)→(5,2)→(5,1)
    expect(dist[0]).toBe(UNREACHABLE);
  });

  it('returns a shortest path of adjacent free cells', () => {
    const path = shortestPath(grid, [1, 1], [5, 1]);
    expect(path).toHaveLength(9);
    expect(path[0]).toEqual([1, 1]);
    expect(path[8]).toEqual([5, 1]);
    for (let i = 1; i < path.length; i++) {
      const [r0, c0] = path[i - 1]!;
      const [r1, c1] = path[i]!;
      expect(Math.abs(r1 - r0) + Math.abs(c1 - c0)).toBe(1);
      expect(grid.walls[r1 * 7 + c1]).toBe(0);
    }
    expect(shortestPath(grid, [1, 1], [0, 0])).toEqual([]);
  });

  it('counts the fewest actions including turns and the final stop', () => {
    // Facing east at (1,1): 4 forwards to (1,5), stop.
    expect(optimalActionCount(grid, [1, 1], 1, [1, 5])).toBe(5);
    // Facing west: two turns first.
    expect(optimalActionCount(grid, [1, 1], 3, [1, 5])).toBe(7);
    // Already there: just stop.
    expect(optimalActionCount(grid, [3, 3], 0, [3, 3])).toBe(1);
    // Facing south at (1,1) to (3,3): 2 forwards, turn left, 2 forwards, stop.
    expect(optimalActionCount(grid, [1, 1], 2, [3, 3])).toBe(6);
  });

  it('rejects a malformed grid naming the bad cell', () => {
    expect(() => gridFromRows(['#.#', '#x#'])).toThrow(/row 1 column 1/);
    expect(() => gridFromRows(['#.#', '##'])).toThrow(/row 1 has 2 cells/);
  });
});
