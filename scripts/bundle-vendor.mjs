// Bundles two third-party leaves, each into one file next to the compiled modules that import
// it (docs/decisions.md): many small modules load far slower than one file. Only leaves are
// bundled: bundling our own modules would give handlers loaded by path a second copy of shared state.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', minify: true, legalComments: 'eof', logLevel: 'warning' };

// The @stdlib distributions the statistics use (CommonJS).
await build({ ...common, entryPoints: ['src/stats/stdlib-dists.cjs'], outfile: 'dist/stats/stdlib-dists.cjs', format: 'cjs' });
// zod, with the module that re-exports it (replacing tsc's output of src/core/zod.ts).
await build({ ...common, entryPoints: ['src/core/zod.ts'], outfile: 'dist/core/zod.js', format: 'esm' });
rmSync('dist/core/zod.js.map', { force: true });
