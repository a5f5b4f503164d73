/**
 * zod, as every module here imports it. The build bundles this module and the zod package into
 * one file (scripts/bundle-vendor.mjs): the package is ~95 small modules, 45–65 ms to load in
 * each process and thread that validates (the CLI, the eval process, each play lane), the bundle
 * 20–28 ms. Under src/ (tests with tsx) this is the package itself, so there is one code path.
 */
import { z } from 'zod';

// Without generating code per schema: most schemas here parse a few times per process (manifests,
// a spec, a summary), where compiling cost more than it saved (12.8 → 7.6 ms for the built-in
// manifests, the same time for 50 parses of a 200-episode summary).
z.config({ jitless: true });

export { z };
