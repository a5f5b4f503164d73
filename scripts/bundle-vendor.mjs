// Bundles src/stats/stdlib-dists.cjs (the @stdlib distributions) into one file next to the compiled statistics (docs/decisions.md).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/stats/stdlib-dists.cjs'],
  outfile: 'dist/stats/stdlib-dists.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
