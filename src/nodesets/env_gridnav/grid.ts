/**
 * The grid world shared by the gridnav env and its agents: cells, headings, moves and
 * breadth-first searches (geodesic distances and the fewest actions to a goal).
 */

/** Row-major occupancy: `walls[r * cols + c]` is 1 for a wall, 0 for a free cell. */
export interface Grid {
  rows: number;
  cols: number;
  walls: Uint8Array;
}

/** `[row, col]` */
export type Cell = readonly [number, number];

/** 0 north, 1 east, 2 south, 3 west: turning right adds 1, turning left subtracts 1 (mod 4). */
export type Heading = 0 | 1 | 2 | 3;

export const HEADING_NAMES = ['north', 'east', 'south', 'west'] as const;

/** Row and column offsets of one forward move per heading. */
export const HEADING_DELTAS: ReadonlyArray<Cell> = [
  [-1, 0],
  [0, 1],
  [1, 0],
  [0, -1],
];

export const WALL_CHAR = '#';
export const FREE_CHAR = '.';

/** A geodesic distance for cells that cannot reach (or be reached from) the source. */
export const UNREACHABLE = -1;

export function turnLeft(h: Heading): Heading {
  return ((h + 3) % 4) as Heading;
}

export function turnRight(h: Heading): Heading {
  return ((h + 1) % 4) as Heading;
}

export function isFree(grid: Grid, r: number, c: number): boolean {
  return r >= 0 && c >= 0 && r < grid.rows && c < grid.cols && grid.walls[r * grid.cols + c] === 0;
}

export function gridToStrings(grid: Grid): string[] {
  const out: string[] = [];
  for (let r = 0; r < grid.rows; r++) {
    let line = '';
    for (let c = 0; c < grid.cols; c++) line += grid.walls[r * grid.cols + c] ? WALL_CHAR : FREE_CHAR;
    out.push(line);
  }
  return out;
}

/** Parses rows of `#`/`.` (or of 0/1 numbers) into a Grid; throws naming the bad row. */
export function gridFromRows(rows: ReadonlyArray<string | ReadonlyArray<number>>): Grid {
  if (rows.length === 0) throw new Error('grid has no rows');
  const cols = rows[0]!.length;
  const walls = new Uint8Array(rows.length * cols);
  rows.forEach((row, r) => {
    if (row.length !== cols) throw new Error(`grid row ${r} has ${row.length} cells, expected ${cols}`);
    for (let c = 0; c < cols; c++) {
      const v = row[c];
      if (v === WALL_CHAR || v === 1) walls[r * cols + c] = 1;
      else if (v !== FREE_CHAR && v !== 0)
        throw new Error(`grid row ${r} column ${c} holds ${JSON.stringify(v)}, expected "#", ".", 0 or 1`);
    }
  });
  return { rows: rows.length, cols, walls };
}

/** Geodesic (4-connected) distance in cells from `source` to every cell; UNREACHABLE for walls and cut-off cells. */
export function distanceMap(grid: Grid, source: Cell): Int32Array {
  const dist = new Int32Array(grid.rows * grid.cols).fill(UNREACHABLE);
  if (!isFree(grid, source[0], source[1])) return dist;
  const queue = new Int32Array(grid.rows * grid.cols);
  let head = 0;
  let tail = 0;
  const start = source[0] * grid.cols + source[1];
  dist[start] = 0;
  queue[tail++] = start;
  while (head < tail) {
    const i = queue[head++]!;
    const r = Math.floor(i / grid.cols);
    const c = i - r * grid.cols;
    for (const [dr, dc] of HEADING_DELTAS) {
      const nr = r + dr;
      const nc = c + dc;
      if (!isFree(grid, nr, nc)) continue;
      const j = nr * grid.cols + nc;
      if (dist[j] !== UNREACHABLE) continue;
      dist[j] = dist[i]! + 1;
      queue[tail++] = j;
    }
  }
  return dist;
}

export function geodesicDistance(grid: Grid, from: Cell, to: Cell): number {
  return distanceMap(grid, to)[from[0] * grid.cols + from[1]] ?? UNREACHABLE;
}

/** The cells of one shortest path from `from` to `to`, both included; empty when unreachable. */
export function shortestPath(grid: Grid, from: Cell, to: Cell): Cell[] {
  const dist = distanceMap(grid, to);
  let d = dist[from[0] * grid.cols + from[1]] ?? UNREACHABLE;
  if (d === UNREACHABLE) return [];
  const path: Cell[] = [from];
  let [r, c] = from;
  while (d > 0) {
    for (const [dr, dc] of HEADING_DELTAS) {
      const nr = r + dr;
      const nc = c + dc;
      if (isFree(grid, nr, nc) && dist[nr * grid.cols + nc] === d - 1) {
        r = nr;
        c = nc;
        break;
      }
    }
    d--;
    path.push([r, c]);
  }
  return path;
}

/**
 * The fewest actions (forward, turn left, turn right, then one stop) that take an agent at
 * `from` facing `heading` onto `goal`: a BFS over (cell, heading) states. UNREACHABLE when none.
 */
export function optimalActionCount(grid: Grid, from: Cell, heading: Heading, goal: Cell): number {
  const n = grid.rows * grid.cols;
  const seen = new Int32Array(n * 4).fill(UNREACHABLE);
  const queue = new Int32Array(n * 4);
  let head = 0;
  let tail = 0;
  const start = (from[0] * grid.cols + from[1]) * 4 + heading;
  seen[start] = 0;
  queue[tail++] = start;
  const goalIndex = goal[0] * grid.cols + goal[1];
  while (head < tail) {
    const s = queue[head++]!;
    const cell = s >> 2;
    const h = (s & 3) as Heading;
    const d = seen[s]!;
    if (cell === goalIndex) return d + 1;
    const r = Math.floor(cell / grid.cols);
    const c = cell - r * grid.cols;
    const [dr, dc] = HEADING_DELTAS[h]!;
    const next = [turnLeft(h) + cell * 4, turnRight(h) + cell * 4];
    if (isFree(grid, r + dr, c + dc)) next.push(((r + dr) * grid.cols + c + dc) * 4 + h);
    for (const t of next) {
      if (seen[t] !== UNREACHABLE) continue;
      seen[t] = d + 1;
      queue[tail++] = t;
    }
  }
  return UNREACHABLE;
}
