/**
 * How much RAM and VRAM a run will take, for admission: the measured peak of earlier runs of
 * the same graph at the same worker count, else the nodesets' declared figures (with each
 * nodeset's per-episode RAM, a sandbox's, once per worker), else the
 * run's `marginalVramMb`, else a default. RAM and VRAM calibrate separately: VRAM only where
 * nvidia-smi attributed GPU memory to an earlier run's processes. CPU cores: the average
 * cores earlier runs of the graph at that worker count kept busy, else the replicated
 * nodesets' declared cores per worker (default 1) times the workers, those that wait on the
 * eval process's thread (inline, no `heavyWith` key set) together at most one core.
 */
import type { NodesetEntry } from '../../nodeset-registry/registry.js';
import { heavyInRun, servedInline } from '../../nodeset-registry/placement.js';
import type { Parallelism, ResourceSpec } from '../../core/types.js';
import type { ResourceEstimate } from '../types.js';

/** The eval process itself (Node, the runner, the executor) before any host. */
export const EVAL_PROCESS_BASE_RAM_MB = 120;
/** A host process of a nodeset that declares no RAM figure. */
export const DEFAULT_HOST_RAM_MB = 80;
/** Cores per worker of a replicated nodeset that declares none: assume it computes, not waits. */
export const DEFAULT_HOST_CORES = 1;
/** A run whose graph has no replicated nodeset still keeps the eval process's thread busy. */
export const EVAL_PROCESS_CORES = 1;

/** What estimation needs to know about each nodeset a graph uses. */
export interface NodesetCost {
  name: string;
  parallelism: Parallelism;
  resources?: ResourceSpec;
  /** Served on the eval process's own thread in this run and light there (it waits, it does not compute): its hosts need one core at most together. */
  inline?: boolean;
}

export interface EstimateInput {
  workerCount: number;
  /** Nodesets the graph uses. Shared ones run in the backend's hosts and cost the run nothing extra. */
  nodesets: NodesetCost[];
  /** Largest process-tree RSS of earlier runs of this graph at this worker count. */
  calibratedPeakMb: number | null;
  /** Largest process-tree GPU memory of those runs, where it was measured. */
  calibratedVramPeakMb?: number | null;
  marginalVramMb?: number;
  /** Largest average CPU cores of earlier runs of this graph at this worker count (CPU time / wall time of the process tree). */
  calibratedCores?: number | null;
}

/** The part of each nodeset entry that estimation reads. */
export function nodesetCosts(entries: readonly NodesetEntry[]): NodesetCost[] {
  return entries.map((e) => ({
    name: e.name,
    parallelism: e.manifest.parallelism,
    ...(e.manifest.resources ? { resources: e.manifest.resources } : {}),
    // A heavy one plays in lanes (one thread per core) and needs its cores per worker like a host of its own.
    ...(servedInline(e.manifest) && !heavyInRun(e.manifest) ? { inline: true } : {}),
  }));
}

export function estimateRun(input: EstimateInput): ResourceEstimate {
  return { ...estimateMemory(input), ...estimateCores(input) };
}

/** The cores a run needs, rounded up to a tenth. */
export function estimateCores(input: EstimateInput): Pick<ResourceEstimate, 'cores' | 'coresSource'> {
  const calibrated = input.calibratedCores ?? null;
  if (calibrated !== null && calibrated > 0) return { cores: roundCores(calibrated), coresSource: 'calibrated' };
  const replicated = input.nodesets.filter((n) => n.parallelism === 'replicated');
  const perWorker = (ns: NodesetCost[]) => ns.reduce((s, n) => s + (n.resources?.cores ?? DEFAULT_HOST_CORES), 0) * input.workerCount;
  // Hosts served on the eval process's thread share that one thread, however many workers the run has.
  const declared =
    replicated.length === 0
      ? EVAL_PROCESS_CORES
      : perWorker(replicated.filter((n) => !n.inline)) + Math.min(EVAL_PROCESS_CORES, perWorker(replicated.filter((n) => n.inline)));
  return { cores: roundCores(declared), coresSource: 'declared' };
}

const roundCores = (c: number): number => Math.max(0.1, Math.ceil(c * 10 - 1e-9) / 10);

function estimateMemory(input: EstimateInput): ResourceEstimate {
  const replicated = input.nodesets.filter((n) => n.parallelism === 'replicated');
  const declaresRam =
    replicated.some((n) => typeof n.resources?.ramMb === 'number') || input.nodesets.some((n) => (n.resources?.episodeRamMb ?? 0) > 0);
  const declaresVram = input.nodesets.some((n) => typeof n.resources?.vramMb === 'number');
  // An episode's own processes (a sandbox) live as long as the episode, whichever host started them: one per worker in flight.
  const perEpisode = input.nodesets.reduce((s, n) => s + (n.resources?.episodeRamMb ?? 0), 0) * input.workerCount;
  const declaredRam =
    EVAL_PROCESS_BASE_RAM_MB +
    perEpisode +
    replicated.reduce((s, n) => s + (n.resources?.ramMb ?? DEFAULT_HOST_RAM_MB) * input.workerCount, 0);
  // Replicated hosts load their own copy of any model per worker; shared hosts are already resident.
  const declaredVram = replicated.reduce((s, n) => s + (n.resources?.vramMb ?? 0) * input.workerCount, 0);
  const marginal = input.marginalVramMb ?? 0;
  const calibratedVram = input.calibratedVramPeakMb ?? null;
  // A measured peak replaces the declarations, as the RSS peak does for RAM.
  const vramMb = calibratedVram !== null && calibratedVram > 0 ? calibratedVram : declaredVram + marginal;
  if (input.calibratedPeakMb !== null && input.calibratedPeakMb > 0) {
    return { ramMb: round(input.calibratedPeakMb), vramMb: round(vramMb), source: 'calibrated' };
  }
  if (declaresRam || declaresVram) return { ramMb: round(declaredRam), vramMb: round(vramMb), source: 'declared' };
  if (input.marginalVramMb !== undefined) return { ramMb: round(declaredRam), vramMb: round(vramMb), source: 'marginal' };
  return { ramMb: round(declaredRam), vramMb: 0, source: 'default' };
}

const round = (mb: number): number => Math.ceil(mb);

/** The nodeset part of a node type (`env_gridnav__step` → `env_gridnav`); null for built-ins such as graphOut. */
export function nodesetOfType(type: string): string | null {
  const i = type.indexOf('__');
  return i > 0 ? type.slice(0, i) : null;
}
