import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BadInputError, GraphValidationError, NotFoundError } from '../../src/errors.js';
import { GraphCatalog } from '../../src/graph/graph-catalog.js';

const graph = (name: string, description?: string) => ({
  name,
  ...(description ? { description } : {}),
  nodes: [{ id: 'out', type: 'graphOut' }],
  edges: [],
});

describe('GraphCatalog', () => {
  let root: string;
  let builtinDir: string;
  let workspaceDir: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'graph-catalog-'));
    builtinDir = join(root, 'builtin');
    workspaceDir = join(root, 'ws');
    mkdirSync(builtinDir);
    mkdirSync(join(workspaceDir, 'graphs'), { recursive: true });
    writeFileSync(join(builtinDir, 'alpha.json'), JSON.stringify(graph('alpha', 'built-in alpha')));
    writeFileSync(join(builtinDir, 'beta.json'), JSON.stringify(graph('beta')));
    writeFileSync(join(builtinDir, 'notes.txt'), 'not a graph');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lists built-in graphs sorted by name with their description', () => {
    const cat = new GraphCatalog({ builtinDir, workspaceDir: join(root, 'missing') });
    expect(cat.list()).toEqual([
      { name: 'alpha', description: 'built-in alpha', source: 'builtin', path: join(builtinDir, 'alpha.json') },
      { name: 'beta', source: 'builtin', path: join(builtinDir, 'beta.json') },
    ]);
    expect(cat.load('beta').name).toBe('beta');
  });

  it('lets the workspace overlay win over a built-in of the same name, and add new ones', () => {
    writeFileSync(join(workspaceDir, 'graphs', 'alpha.json'), JSON.stringify(graph('alpha', 'edited in workspace')));
    writeFileSync(join(workspaceDir, 'graphs', 'gamma.json'), JSON.stringify(graph('gamma')));
    const cat = new GraphCatalog({ builtinDir, workspaceDir });
    expect(cat.list().map((g) => [g.name, g.source, g.description])).toEqual([
      ['alpha', 'workspace', 'edited in workspace'],
      ['beta', 'builtin', undefined],
      ['gamma', 'workspace', undefined],
    ]);
    expect(cat.load('alpha').description).toBe('edited in workspace');
    expect(cat.load('gamma').name).toBe('gamma');
  });

  it('takes the workspace from ACTIVE_WORKSPACE_DIR by default', () => {
    writeFileSync(join(workspaceDir, 'graphs', 'alpha.json'), JSON.stringify(graph('alpha', 'from env')));
    const saved = process.env.ACTIVE_WORKSPACE_DIR;
    process.env.ACTIVE_WORKSPACE_DIR = workspaceDir;
    try {
      expect(new GraphCatalog({ builtinDir }).load('alpha').description).toBe('from env');
    } finally {
      if (saved === undefined) delete process.env.ACTIVE_WORKSPACE_DIR;
      else process.env.ACTIVE_WORKSPACE_DIR = saved;
    }
  });

  it('refuses a name that could leave the folder', () => {
    const cat = new GraphCatalog({ builtinDir, workspaceDir });
    for (const bad of ['../secret', 'a/b', '', '..']) {
      expect(() => cat.load(bad)).toThrow(BadInputError);
    }
    expect(() => cat.load('../x')).toThrow('invalid graph name "../x"');
  });

  it('names a missing graph and lists the available ones', () => {
    const cat = new GraphCatalog({ builtinDir, workspaceDir });
    expect(() => cat.load('delta')).toThrow(NotFoundError);
    expect(() => cat.load('delta')).toThrow('graph "delta" not found (available: alpha, beta)');
  });

  it('names the file holding bad JSON or a bad shape', () => {
    const badJson = join(workspaceDir, 'graphs', 'broken.json');
    writeFileSync(badJson, '{ "name": ');
    const badShape = join(builtinDir, 'shape.json');
    writeFileSync(badShape, JSON.stringify({ name: 'shape', nodes: 'x', edges: [] }));
    const cat = new GraphCatalog({ builtinDir, workspaceDir });
    expect(() => cat.load('broken')).toThrow(GraphValidationError);
    expect(() => cat.load('broken')).toThrow(badJson);
    expect(() => cat.load('shape')).toThrow(GraphValidationError);
    expect(() => cat.load('shape')).toThrow(new RegExp(`${badShape}.*nodes: `));
  });
});
