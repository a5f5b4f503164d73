/** Where the package's own files live, whether running from dist/ or from src/ under tsx. */
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
/** The package root (the folder with package.json). */
export const PACKAGE_ROOT = resolve(here, '..');
/** Compiled code; child processes are always started from here. */
export const DIST_DIR = join(PACKAGE_ROOT, 'dist');
/** Built-in nodesets with their manifests and data, as copied by the build. */
export const BUILTIN_NODESETS_DIR = join(DIST_DIR, 'nodesets');
export const BUILTIN_GRAPHS_DIR = join(PACKAGE_ROOT, 'graphs');
/** Built-in datasets (read in place, not copied by the build). */
export const BUILTIN_DATASETS_DIR = join(PACKAGE_ROOT, 'datasets');
export const WEB_DIST_DIR = join(PACKAGE_ROOT, 'web', 'dist');
export const EVAL_PROCESS_MAIN = join(DIST_DIR, 'eval-process', 'main.js');
export const HOST_MAIN = join(DIST_DIR, 'host', 'host-main.js');
export const DEFAULT_OUTPUTS_DIR = resolve(process.cwd(), 'outputs');
