// The @stdlib distributions the statistics use (stats/distributions.ts), in one module. The
// build bundles this file with esbuild into dist/stats/stdlib-dists.cjs (scripts/bundle-vendor.mjs):
// the packages are ~450 small modules that take ~100 ms of CPU to load, the bundle ~15 ms.
module.exports = {
  binomialCdf: require('@stdlib/stats-base-dists-binomial-cdf'),
  erfc: require('@stdlib/math-base-special-erfc'),
  normalQuantile: require('@stdlib/stats-base-dists-normal-quantile'),
  tCdf: require('@stdlib/stats-base-dists-t-cdf'),
  tQuantile: require('@stdlib/stats-base-dists-t-quantile'),
};
