/**
 * NodesetRegistry: the nodesets known to this process — built-ins and the workspace overlay
 * scanned from disk, and remote ones borrowed by URL — and the resolution of node types
 * (`<nodeset>__<function>`) to callables that reach the right host.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { byName } from '../core/by-name.js';
import { HostError, NotFoundError } from '../errors.js';
import { BUILTIN_NODESETS_DIR } from '../paths.js';
import { HostClient } from '../host/host-client.js';
import { MANIFEST_FILE, loadManifest, parseManifest } from './manifest.js';
import { loadNodesetModule } from './nodeset-module.js';
import type { NodeCallArgs, NodeOutputs, NodesetManifest, NodesetModule, NodeTypeResolver, ResolvedNodeType } from '../core/types.js';

export type NodesetSource = 'builtin' | 'workspace' | 'remote';

export interface NodesetEntry {
  name: string;
  /** The nodeset's folder; empty for a remote nodeset with no folder on this machine. */
  dir: string;
  manifest: NodesetManifest;
  source: NodesetSource;
  /** Where its host listens, once one is registered or attached. */
  url?: string;
}

export interface ScanOptions {
  /** Folder of built-in nodesets, one sub-folder with a manifest.json each. @default BUILTIN_NODESETS_DIR */
  builtinDir?: string;
  /** Workspace overlay: its `graph_nodes/*` win over built-ins of the same name. @default process.env.ACTIVE_WORKSPACE_DIR */
  workspaceDir?: string;
}

/** Separator between nodeset and function in a node type. */
export const NODE_TYPE_SEPARATOR = '__';

/** Splits `<nodeset>__<function>`; undefined when the type has no separator. */
export function splitNodeType(type: string): { nodeset: string; fn: string } | undefined {
  const i = type.indexOf(NODE_TYPE_SEPARATOR);
  if (i <= 0 || i + NODE_TYPE_SEPARATOR.length >= type.length) return undefined;
  return { nodeset: type.slice(0, i), fn: type.slice(i + NODE_TYPE_SEPARATOR.length) };
}

/** The nodesets the nodes of a graph file call, by name, sorted (built-in node types such as `graphOut` call none). */
export function nodesetNamesOf(nodes: ReadonlyArray<{ type: string }>): string[] {
  return [...new Set(nodes.flatMap((n) => splitNodeType(n.type)?.nodeset ?? []))].sort();
}

/** Of `entries`, those the nodes of a graph file call. */
export function entriesUsedBy(nodes: ReadonlyArray<{ type: string }>, entries: readonly NodesetEntry[]): NodesetEntry[] {
  const names = new Set(nodesetNamesOf(nodes));
  return entries.filter((e) => names.has(e.name));
}

async function scanDir(root: string, source: NodesetSource): Promise<NodesetEntry[]> {
  let names: string[];
  try {
    names = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const entries: NodesetEntry[] = [];
  for (const name of names.sort()) {
    const dir = join(root, name);
    // A folder without a manifest (shared code, caches) is not a nodeset.
    if (!existsSync(join(dir, MANIFEST_FILE))) continue;
    const manifest = await loadManifest(dir);
    entries.push({ name: manifest.name, dir, manifest, source });
  }
  return entries;
}

export class NodesetRegistry implements NodeTypeResolver {
  private readonly entries = new Map<string, NodesetEntry>();
  private readonly locals = new Map<string, NodesetModule>();
  private readonly clients = new Map<string, HostClient>();
  private readonly resolved = new Map<string, ResolvedNodeType>();

  /** An empty registry; `scan()` is the usual way to make one. */
  constructor(entries: NodesetEntry[] = []) {
    for (const e of entries) this.entries.set(e.name, e);
  }

  /** Reads `<builtinDir>/*\/manifest.json` and `<workspaceDir>/graph_nodes/*\/manifest.json`; the workspace wins. */
  static async scan(options: ScanOptions = {}): Promise<NodesetRegistry> {
    const builtinDir = options.builtinDir ?? BUILTIN_NODESETS_DIR;
    const workspaceDir = options.workspaceDir ?? (process.env.ACTIVE_WORKSPACE_DIR || undefined);
    const registry = new NodesetRegistry();
    const builtins = await scanDir(builtinDir, 'builtin');
    const workspace = workspaceDir ? await scanDir(join(workspaceDir, 'graph_nodes'), 'workspace') : [];
    for (const list of [builtins, workspace]) {
      const seen = new Map<string, string>();
      for (const e of list) {
        const other = seen.get(e.name);
        if (other) throw new HostError(`two nodesets are named "${e.name}": ${other} and ${e.dir}`);
        seen.set(e.name, e.dir);
        registry.entries.set(e.name, e);
      }
    }
    return registry;
  }

  list(): NodesetEntry[] {
    return [...this.entries.values()].sort(byName);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  get(name: string): NodesetEntry {
    const entry = this.entries.get(name);
    if (!entry) throw new NotFoundError(`nodeset "${name}"`, { detail: `known: ${[...this.entries.keys()].sort().join(', ') || 'none'}` });
    return entry;
  }

  /**
   * Borrows a running host: fetches its manifest and routes calls to `url`. Nothing here ever
   * stops that host.
   */
  async registerRemote(name: string, url: string, signal?: AbortSignal): Promise<NodesetEntry> {
    const raw = await this.client(url).manifest(signal);
    const manifest = parseManifest(raw, `served by ${url}`);
    if (manifest.name !== name) {
      throw new HostError(`the host at ${url} serves nodeset "${manifest.name}", not "${name}"`);
    }
    const entry: NodesetEntry = { name, dir: this.entries.get(name)?.dir ?? '', manifest, source: 'remote', url };
    this.entries.set(name, entry);
    this.forget(name);
    return entry;
  }

  /** Routes calls of `name` to a host this process started. */
  attachUrl(name: string, url: string): void {
    this.get(name).url = url;
  }

  /** Forgets the URL of `name` (its host stopped); calls need a URL override or a local module again. */
  detachUrl(name: string): void {
    delete this.get(name).url;
  }

  /** Loads the nodeset's JS module into this process, so calls with no URL run in-process. */
  async useLocal(name: string): Promise<void> {
    if (this.locals.has(name)) return;
    const entry = this.get(name);
    const mod = await loadNodesetModule(entry.dir, entry.manifest);
    await mod.init?.({ dir: entry.dir, manifest: entry.manifest });
    this.locals.set(name, mod);
  }

  /** The client for a host URL, shared so every call to one host reuses its keep-alive sockets. */
  client(url: string): HostClient {
    let c = this.clients.get(url);
    if (!c) {
      c = new HostClient(url);
      this.clients.set(url, c);
    }
    return c;
  }

  resolve(type: string): ResolvedNodeType | undefined {
    const cached = this.resolved.get(type);
    if (cached) return cached;
    const parts = splitNodeType(type);
    if (!parts) return undefined;
    const entry = this.entries.get(parts.nodeset);
    const fn = entry?.manifest.functions.find((f) => f.name === parts.fn);
    if (!entry || !fn) return undefined;

    const nodeset = entry.name;
    const request = { function: fn.name };
    const resolved: ResolvedNodeType = {
      type,
      nodeset,
      fn,
      invoke: (args: NodeCallArgs, url?: string): Promise<NodeOutputs> => {
        const target = url ?? this.entries.get(nodeset)?.url;
        if (target !== undefined) {
          return this.client(target).call({ ...request, inputs: args.inputs, config: args.config, ctx: args.ctx }, args.signal);
        }
        const mod = this.locals.get(nodeset);
        if (mod) return invokeLocal(mod, nodeset, fn.name, args);
        return Promise.reject(
          new HostError(
            `nodeset "${nodeset}" is not hosted: no host URL is registered for it and its module is not loaded in this process (node type ${type})`,
          ),
        );
      },
    };
    this.resolved.set(type, resolved);
    return resolved;
  }

  knownTypes(): string[] {
    const types: string[] = [];
    for (const e of this.entries.values()) for (const f of e.manifest.functions) types.push(`${e.name}${NODE_TYPE_SEPARATOR}${f.name}`);
    return types.sort();
  }

  /** Closes the host clients' sockets. Hosts themselves are not touched. Idempotent. */
  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private forget(nodeset: string): void {
    for (const key of this.resolved.keys()) if (key.startsWith(nodeset + NODE_TYPE_SEPARATOR)) this.resolved.delete(key);
  }
}

async function invokeLocal(mod: NodesetModule, nodeset: string, fn: string, args: NodeCallArgs): Promise<NodeOutputs> {
  const single = mod.functions?.[fn];
  if (single) return single(args);
  const batched = mod.batched?.[fn];
  if (batched) {
    const out = await batched([args]);
    if (!Array.isArray(out) || out.length !== 1)
      throw new HostError(`batched function ${nodeset}__${fn} returned ${Array.isArray(out) ? out.length : 'no'} rows for 1`);
    return out[0] as NodeOutputs;
  }
  throw new HostError(`nodeset "${nodeset}": its module exports no handler for "${fn}"`);
}
