/**
 * Saved graphs by name: the built-in folder, overlaid by the active workspace's `graphs/`.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { byName } from '../core/by-name.js';
import { BadInputError, GraphValidationError, NotFoundError, errorMessage } from '../errors.js';
import { BUILTIN_GRAPHS_DIR } from '../paths.js';
import { parseGraph } from './graph.js';
import type { GraphSpec } from '../core/types.js';

export const GRAPH_NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;

export interface GraphCatalogOptions {
  /** Folder of built-in graphs (`<name>.json`). @default BUILTIN_GRAPHS_DIR */
  builtinDir?: string;
  /** Workspace overlay; its `graphs/<name>.json` win over the built-ins. @default process.env.ACTIVE_WORKSPACE_DIR */
  workspaceDir?: string;
}

export interface GraphListing {
  name: string;
  description?: string;
  source: 'builtin' | 'workspace';
  path: string;
}

export class GraphCatalog {
  readonly builtinDir: string;
  readonly workspaceDir: string | undefined;

  constructor(options: GraphCatalogOptions = {}) {
    this.builtinDir = options.builtinDir ?? BUILTIN_GRAPHS_DIR;
    const ws = options.workspaceDir ?? process.env.ACTIVE_WORKSPACE_DIR;
    this.workspaceDir = ws ? ws : undefined;
  }

  private dirs(): Array<{ dir: string; source: GraphListing['source'] }> {
    const out: Array<{ dir: string; source: GraphListing['source'] }> = [];
    if (this.workspaceDir) out.push({ dir: join(this.workspaceDir, 'graphs'), source: 'workspace' });
    out.push({ dir: this.builtinDir, source: 'builtin' });
    return out;
  }

  /** Every graph by name (the workspace copy where both have one), sorted by name. */
  list(): GraphListing[] {
    const found = new Map<string, GraphListing>();
    for (const { dir, source } of this.dirs()) {
      let files: string[];
      try {
        files = readdirSync(dir);
      } catch {
        continue;
      }
      for (const file of files) {
        if (!file.endsWith('.json')) continue;
        const name = basename(file, '.json');
        if (!GRAPH_NAME_PATTERN.test(name) || found.has(name)) continue;
        const path = join(dir, file);
        const listing: GraphListing = { name, source, path };
        const description = readDescription(path);
        if (description !== undefined) listing.description = description;
        found.set(name, listing);
      }
    }
    return [...found.values()].sort(byName);
  }

  /** The path `load(name)` would read, or undefined when no such graph exists. */
  pathOf(name: string): string | undefined {
    assertGraphName(name);
    for (const { dir } of this.dirs()) {
      const path = join(dir, `${name}.json`);
      if (existsSync(path)) return path;
    }
    return undefined;
  }

  /** Reads and shape-checks a graph (semantic validation needs the nodesets: see validateGraph). */
  load(name: string): GraphSpec {
    const path = this.pathOf(name);
    if (!path) {
      const available = this.list().map((g) => g.name);
      throw new NotFoundError(`graph "${name}"`, { detail: `available: ${available.join(', ') || 'none'}` });
    }
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new GraphValidationError(path, [`cannot read ${path}: ${errorMessage(err)}`]);
    }
    return parseGraph(json, path);
  }
}

export function assertGraphName(name: string): void {
  if (!GRAPH_NAME_PATTERN.test(name) || name === '.' || name === '..') {
    throw new BadInputError(`invalid graph name "${name}": use letters, digits, ".", "_" and "-"`);
  }
}

function readDescription(path: string): string | undefined {
  try {
    const json = JSON.parse(readFileSync(path, 'utf8')) as { description?: unknown };
    return typeof json.description === 'string' ? json.description : undefined;
  } catch {
    return undefined;
  }
}
