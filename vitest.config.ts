import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql ships CJS ("main") and ESM ("module"): Node loads the CJS one for yoga and pothos,
    // so tests must too, or two copies of graphql meet in one schema.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The slowest files and tests are printed at the end: CI runs on 2 cores within a time limit.
    reporters: ['default', './test/support/slowest-reporter.ts'],
    // Tests spawn real processes and servers; forks isolate them and two files at a time fit 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
