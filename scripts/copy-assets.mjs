// Copies the non-TypeScript files of built-in nodesets (manifests, weights, data) next to their compiled handlers.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function copyTree(src, dst) {
  for (const name of readdirSync(src)) {
    const s = join(src, name);
    const d = join(dst, name);
    if (statSync(s).isDirectory()) copyTree(s, d);
    else if (!/\.(ts|tsx)$/.test(name)) cpSync(s, d);
  }
}
copyTree('src/nodesets', 'dist/nodesets');
