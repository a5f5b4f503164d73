/** The built-in nodesets and graphs fit together: manifests are valid, every declared function has a handler, every graph validates. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseGraph, validateGraph } from '../../src/graph/graph.js';
import { parseManifest } from '../../src/nodeset-registry/manifest.js';
import type { NodesetManifest, NodesetModule, NodeTypeResolver, ResolvedNodeType } from '../../src/core/types.js';

const nodesetsDir = fileURLToPath(new URL('../../src/nodesets/', import.meta.url));
const graphsDir = fileURLToPath(new URL('../../graphs/', import.meta.url));
const NODESETS = ['env_gridnav', 'env_cartpole', 'planner', 'policy_mlp', 'score', 'tools', 'sandbox'];

async function manifests(): Promise<NodesetManifest[]> {
  return Promise.all(
    NODESETS.map(async (name) => parseManifest(JSON.parse(await readFile(join(nodesetsDir, name, 'manifest.json'), 'utf8')), name)),
  );
}

function resolverOf(all: NodesetManifest[]): NodeTypeResolver {
  const types = new Map<string, ResolvedNodeType>();
  for (const m of all) {
    for (const fn of m.functions) {
      const type = `${m.name}__${fn.name}`;
      types.set(type, { type, nodeset: m.name, fn, invoke: () => Promise.reject(new Error('not called here')) });
    }
  }
  return { resolve: (t) => types.get(t), knownTypes: () => [...types.keys()] };
}

describe('built-in nodesets', () => {
  it('have valid manifests named after their folders, with the compiled module path', async () => {
    for (const [i, m] of (await manifests()).entries()) {
      expect(m.name).toBe(NODESETS[i]);
      expect(m.module).toBe('./handlers.js');
    }
  });

  it('implement every declared function, batched ones with a batched handler, envs with a panel', async () => {
    for (const m of await manifests()) {
      const mod = (await import(pathToFileURL(join(nodesetsDir, m.name, 'handlers.ts')).href)).default as NodesetModule;
      for (const fn of m.functions) {
        const handler = fn.batched ? mod.batched?.[fn.name] : mod.functions?.[fn.name];
        expect(typeof handler, `${m.name}.${fn.name}`).toBe('function');
      }
      expect(Boolean(mod.panel), m.name).toBe(Boolean(m.panel));
      if (m.parallelism === 'replicated') expect(typeof mod.evict, m.name).toBe('function');
      for (const field of m.panel?.fields ?? [])
        expect(mod.panel!.options(field.name, {}), `${m.name} ${field.name}`).toContain(field.default);
    }
  });
});

describe('built-in graphs', () => {
  it('are the three day-one graphs, each with a description and a step budget, and all validate', async () => {
    const files = (await readdir(graphsDir)).filter((f) => f.endsWith('.json')).sort();
    expect(files).toEqual(expect.arrayContaining(['cartpole_mlp.json', 'gridnav_planner.json', 'gridnav_random.json']));
    const resolver = resolverOf(await manifests());
    for (const file of ['cartpole_mlp.json', 'gridnav_planner.json', 'gridnav_random.json']) {
      const spec = parseGraph(JSON.parse(await readFile(join(graphsDir, file), 'utf8')), file);
      expect(spec.name).toBe(file.replace(/\.json$/, ''));
      expect(spec.description?.length).toBeGreaterThan(20);
      expect(spec.step_budget).toBeGreaterThan(0);
      expect(() => validateGraph(spec, resolver)).not.toThrow();
      // Metrics reach the graphOut; images stay off it so metric flattening sees only numbers.
      expect(spec.edges).toContainEqual({ from: 'env.metrics', to: 'result.metrics' });
      expect(spec.edges.some((e) => e.from.endsWith('.trajectory'))).toBe(false);
    }
  });
});
