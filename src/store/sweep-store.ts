/**
 * Sweeps on disk: `<outputs>/sweeps/<sweepId>.json`, written once when the sweep is queued
 * (its grid, seeds and the run of every config × seed) and again when it is cancelled.
 */
import { open, readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from '../core/zod.js';
import { BadInputError, NotFoundError } from '../errors.js';
import { readJson, writeJsonAtomic } from './atomic.js';
import { makeDirs } from './make-dirs.js';

export const SWEEPS_SUBDIR = 'sweeps';
/** `sweep_YYYYMMDD_HHMMSS` with `_N` on collision. */
const SWEEP_ID_PATTERN = /^sweep_\d{8}_\d{6}(_\d{1,4})?$/;

export const isValidSweepId = (id: string): boolean => SWEEP_ID_PATTERN.test(id);

export function assertSweepId(id: string): void {
  if (!isValidSweepId(id)) throw new BadInputError(`invalid sweep id "${id}": expected sweep_YYYYMMDD_HHMMSS or sweep_YYYYMMDD_HHMMSS_N`);
}

const sweepConfigSchema = z.object({
  index: z.number().int().nonnegative(),
  /** "node.key" → value: this config's point of the grid. */
  point: z.record(z.string(), z.unknown()),
  /** The overrides its runs got: the base's, with the point applied. */
  overrides: z.record(z.string(), z.record(z.string(), z.unknown())),
  /** One run per seed, in the order of `seeds`. */
  runIds: z.array(z.string()),
});

export const sweepRecordSchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  graphName: z.string(),
  /** The base input every run started from (without the grid's overrides and the seed). */
  base: z.record(z.string(), z.unknown()),
  grid: z.record(z.string(), z.array(z.unknown())),
  seeds: z.array(z.number().int()),
  configs: z.array(sweepConfigSchema),
  cancelledAt: z.string().nullable().default(null),
});

export type SweepRecord = z.output<typeof sweepRecordSchema>;
export type SweepConfig = SweepRecord['configs'][number];

export const sweepsRoot = (outputsDir: string): string => join(resolve(outputsDir), SWEEPS_SUBDIR);

function sweepPath(outputsDir: string, id: string): string {
  assertSweepId(id);
  return join(sweepsRoot(outputsDir), `${id}.json`);
}

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** A fresh sweep id for `now` (claimed by creating its file exclusively). */
export async function allocateSweepId(outputsDir: string, now: Date = new Date()): Promise<string> {
  makeDirs(sweepsRoot(outputsDir));
  const base = `sweep_${stamp(now)}`;
  for (let i = 0; i < 10_000; i++) {
    const id = i === 0 ? base : `${base}_${i}`;
    try {
      const fh = await open(sweepPath(outputsDir, id), 'wx');
      await fh.close();
      return id;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`could not allocate a sweep id for ${base}`);
}

/** Removes a sweep's file (a sweep whose runs could not all be queued). */
export async function removeSweep(outputsDir: string, id: string): Promise<void> {
  await rm(sweepPath(outputsDir, id), { force: true });
}

export async function writeSweep(outputsDir: string, sweep: SweepRecord): Promise<void> {
  await writeJsonAtomic(sweepPath(outputsDir, sweep.id), sweep);
}

/** The sweep; NOT_FOUND when there is none (or its file is not yet written). */
export async function readSweep(outputsDir: string, id: string): Promise<SweepRecord> {
  const path = sweepPath(outputsDir, id);
  let raw: unknown;
  try {
    raw = await readJson(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || err instanceof SyntaxError) throw new NotFoundError(`sweep "${id}"`, { cause: err });
    throw err;
  }
  const parsed = sweepRecordSchema.safeParse(raw);
  if (!parsed.success) throw new NotFoundError(`sweep "${id}" (its file is not a sweep)`);
  return parsed.data;
}

/** Every sweep id, newest first. */
export async function listSweepIds(outputsDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(sweepsRoot(outputsDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -'.json'.length))
    .filter(isValidSweepId)
    .sort()
    .reverse();
}
