/**
 * Procedural mazes: a recursive backtracker carves a perfect maze, then a fraction of the
 * remaining inner walls is knocked down so that some places have more than one route.
 */
import type { Prng } from '../../core/prng.js';
import { distanceMap, HEADING_DELTAS, type Cell, type Grid, type Heading, UNREACHABLE } from './grid.js';

export interface MazeSpec {
  /** Maze rooms per side; the grid has `2 * rooms + 1` cells per side (walls between rooms). */
  roomRows: number;
  roomCols: number;
  /** Probability that each remaining inner wall between two rooms is removed. */
  loopFraction: number;
  /** Preferred least geodesic distance (cells) from start to goal. */
  minGoalDistance: number;
}

export interface Maze {
  grid: Grid;
  start: Cell;
  startHeading: Heading;
  goal: Cell;
}

export function generateMaze(prng: Prng, spec: MazeSpec): Maze {
  const grid = carve(prng, spec);
  addLoops(prng, grid, spec.loopFraction);
  const free: number[] = [];
  for (let i = 0; i < grid.walls.length; i++) if (grid.walls[i] === 0) free.push(i);
  const startIndex = prng.pick(free);
  const start = toCell(grid, startIndex);
  const dist = distanceMap(grid, start);
  let far = free.filter((i) => dist[i]! >= spec.minGoalDistance);
  if (far.length === 0) {
    // Small maze: settle for the farthest cells.
    const max = Math.max(...free.map((i) => dist[i]!));
    far = free.filter((i) => dist[i] === max);
  }
  const goal = toCell(grid, prng.pick(far));
  const startHeading = prng.int(4) as Heading;
  if (dist[goal[0] * grid.cols + goal[1]] === UNREACHABLE) throw new Error('maze generator produced an unreachable goal');
  return { grid, start, startHeading, goal };
}

function toCell(grid: Grid, i: number): Cell {
  const r = Math.floor(i / grid.cols);
  return [r, i - r * grid.cols];
}

function carve(prng: Prng, spec: MazeSpec): Grid {
  const rows = 2 * spec.roomRows + 1;
  const cols = 2 * spec.roomCols + 1;
  const walls = new Uint8Array(rows * cols).fill(1);
  const visited = new Uint8Array(spec.roomRows * spec.roomCols);
  const stack: number[] = [prng.int(spec.roomRows * spec.roomCols)];
  visited[stack[0]!] = 1;
  const open = (room: number): void => {
    const rr = Math.floor(room / spec.roomCols);
    walls[(2 * rr + 1) * cols + 2 * (room - rr * spec.roomCols) + 1] = 0;
  };
  open(stack[0]!);
  while (stack.length > 0) {
    const room = stack[stack.length - 1]!;
    const rr = Math.floor(room / spec.roomCols);
    const rc = room - rr * spec.roomCols;
    const options: Array<[number, number, number]> = [];
    for (const [dr, dc] of HEADING_DELTAS) {
      const nr = rr + dr;
      const nc = rc + dc;
      if (nr < 0 || nc < 0 || nr >= spec.roomRows || nc >= spec.roomCols) continue;
      if (visited[nr * spec.roomCols + nc]) continue;
      options.push([nr * spec.roomCols + nc, dr, dc]);
    }
    if (options.length === 0) {
      stack.pop();
      continue;
    }
    const [next, dr, dc] = prng.pick(options);
    walls[(2 * rr + 1 + dr) * cols + 2 * rc + 1 + dc] = 0;
    visited[next] = 1;
    open(next);
    stack.push(next);
  }
  return { rows, cols, walls };
}

/** Inner walls sit between two rooms: one coordinate odd, the other even, not on the border. */
function addLoops(prng: Prng, grid: Grid, fraction: number): void {
  if (fraction <= 0) return;
  for (let r = 1; r < grid.rows - 1; r++) {
    for (let c = 1; c < grid.cols - 1; c++) {
      if ((r + c) % 2 === 0) continue;
      const i = r * grid.cols + c;
      if (grid.walls[i] === 0) continue;
      if (prng.next() < fraction) grid.walls[i] = 0;
    }
  }
}
