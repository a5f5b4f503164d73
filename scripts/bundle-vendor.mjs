// Bundles two third-party leaves, each into one file next to the compiled modules that import
// it (docs/decisions.md): many small modules load far slower than one file. Only leaves are
// bundled: bundling our own modules would give handlers loaded by path a second copy of shared state.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', minify: true, legalComments: 'eof', logLevel: 'warning' };

// The @stdlib distributions the statistics use (CommonJS).
await build({ ...common, entryPoints: ['src/stats/stdlib-dists.cjs'], outfile: 'dist/stats/stdlib-dists.cjs', format: 'cjs' });
// The zod functions src/core/zod-api.ts names, with src/core/zod.ts (replacing tsc's output of both).
await build({ ...common, entryPoints: ['src/core/zod.ts'], outfile: 'dist/core/zod.js', format: 'esm' });
for (const f of ['zod.js.map', 'zod-api.js', 'zod-api.js.map']) rmSync(`dist/core/${f}`, { force: true });
