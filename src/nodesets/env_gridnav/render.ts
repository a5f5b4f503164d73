/** Draws a gridnav maze with the agent's trajectory as a PNG. */
import { encodeRgbPng } from '../_lib/rgb-png.js';
import { HEADING_DELTAS, type Cell, type Grid, type Heading } from './grid.js';

type Rgb = Buffer;

const rgb = (r: number, g: number, b: number): Rgb => Buffer.from([r, g, b]);

const WALL = rgb(43, 43, 43);
const FLOOR = rgb(245, 245, 240);
const START = rgb(46, 160, 67);
const GOAL = rgb(215, 58, 73);
const PATH = rgb(31, 111, 235);
const AGENT = rgb(245, 159, 0);

/** Target image side in pixels; each cell gets a whole number of pixels. */
const TARGET_PX = 384;

/** Pixels per grid cell for a maze of this size (at least 4). */
export function cellPixels(grid: Pick<Grid, 'rows' | 'cols'>): number {
  return Math.max(4, Math.floor(TARGET_PX / Math.max(grid.rows, grid.cols)));
}

export interface TrajectoryDrawing {
  grid: Grid;
  start: Cell;
  goal: Cell;
  /** Cells visited in order, the start first. */
  trajectory: readonly Cell[];
  heading: Heading;
}

export function renderTrajectoryPng(d: TrajectoryDrawing): Buffer {
  const px = cellPixels(d.grid);
  const width = d.grid.cols * px;
  const height = d.grid.rows * px;
  const stride = width * 3;
  const data = Buffer.alloc(stride * height);
  const fill = (x0: number, y0: number, x1: number, y1: number, color: Rgb): void => {
    const xa = Math.max(0, x0);
    const xb = Math.min(width, x1);
    if (xb <= xa) return;
    for (let y = Math.max(0, y0); y < Math.min(height, y1); y++) data.fill(color, y * stride + xa * 3, y * stride + xb * 3);
  };
  for (let r = 0; r < d.grid.rows; r++) {
    // One pixel row of the cells, then copies of it for the rest of the cell's height.
    const top = r * px * stride;
    for (let c = 0; c < d.grid.cols; c++) {
      fill(c * px, r * px, (c + 1) * px, r * px + 1, d.grid.walls[r * d.grid.cols + c] ? WALL : FLOOR);
    }
    for (let y = 1; y < px; y++) data.copy(data, top + y * stride, top, top + stride);
  }
  const inset = Math.floor(px / 10);
  const markCell = ([r, c]: Cell, color: Rgb): void =>
    fill(c * px + inset, r * px + inset, (c + 1) * px - inset, (r + 1) * px - inset, color);
  markCell(d.start, START);
  markCell(d.goal, GOAL);
  // Segments between consecutive cell centres; moves are axis-aligned so each is a thin rectangle.
  const half = Math.max(1, Math.floor(px / 8));
  const centre = (v: number): number => v * px + Math.floor(px / 2);
  for (let i = 1; i < d.trajectory.length; i++) {
    const [r0, c0] = d.trajectory[i - 1]!;
    const [r1, c1] = d.trajectory[i]!;
    const xa = Math.min(centre(c0), centre(c1));
    const xb = Math.max(centre(c0), centre(c1));
    const ya = Math.min(centre(r0), centre(r1));
    const yb = Math.max(centre(r0), centre(r1));
    fill(xa - half, ya - half, xb + half + 1, yb + half + 1, PATH);
  }
  const [ar, ac] = d.trajectory[d.trajectory.length - 1] ?? d.start;
  const size = Math.max(2, Math.floor(px / 4));
  fill(centre(ac) - size, centre(ar) - size, centre(ac) + size + 1, centre(ar) + size + 1, AGENT);
  const [hr, hc] = HEADING_DELTAS[d.heading]!;
  // A short nose in the heading direction.
  const nx = centre(ac) + hc * size * 2;
  const ny = centre(ar) + hr * size * 2;
  fill(
    Math.min(nx, centre(ac)) - half,
    Math.min(ny, centre(ar)) - half,
    Math.max(nx, centre(ac)) + half + 1,
    Math.max(ny, centre(ar)) + half + 1,
    AGENT,
  );
  return encodeRgbPng(width, height, data);
}
