/**
 * zod, as every module here imports it: `z`, the functions of src/core/zod-api.ts. The build
 * bundles this module with them and the zod package into one file (scripts/bundle-vendor.mjs):
 * the package is ~95 small modules, 45–65 ms to load in each process and thread that validates
 * (the CLI, the eval process, each play lane), the bundle 8–15 ms. Under src/ (tests with tsx)
 * these are the package's own modules, so there is one code path.
 */
export * as z from './zod-api.js';
