// Fails when a module imports from a higher layer. Layers, lowest first; a module may import its
// own layer and any layer below. madge builds the import graph (the same one the cycle check uses).
import { readFileSync } from 'node:fs';
import madge from 'madge';

const LAYERS = [
  ['errors.ts', 'paths.ts', 'statuses.ts', 'core/', 'scoring/', 'stats/', 'tracing/'],
  ['datasets/', 'graph/', 'host/', 'nodeset-registry/', 'nodesets/'],
  ['spec/'],
  ['store/', 'compare/'],
  ['export/'],
  ['eval-process/'],
  ['scheduler/', 'scaleout/', 'audit/'],
  ['resolvers/', 'http/'],
  ['app.ts', 'app/'],
  ['cli/'],
  ['main.ts'],
];

const rank = (file) => {
  const i = LAYERS.findIndex((layer) => layer.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
  if (i < 0) throw new Error(`${file} is in no layer: add its folder to scripts/check-layers.mjs`);
  return i;
};

const graph = (await madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json' })).obj();
const wrong = [];
for (const [from, deps] of Object.entries(graph)) {
  for (const to of deps) if (rank(to) > rank(from)) wrong.push(`${from} -> ${to}`);
}
// A bundled leaf is imported only through the module the build bundles it with (scripts/bundle-vendor.mjs).
const BUNDLED = { zod: 'core/zod-api.ts' };
for (const file of Object.keys(graph)) {
  const text = readFileSync(`src/${file}`, 'utf8');
  for (const [pkg, via] of Object.entries(BUNDLED)) {
    if (file !== via && new RegExp(`from '${pkg}(/[^']*)?'`).test(text)) wrong.push(`${file} -> ${pkg} (import it from src/${via})`);
  }
}
if (wrong.length) {
  console.error(`Imports that run up a layer or around a bundled leaf (see scripts/check-layers.mjs):\n  ${wrong.join('\n  ')}`);
  process.exit(1);
}
console.log(`layers ok: ${Object.keys(graph).length} modules`);
