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
/** The inside of a host served in a worker thread (thread-host.ts). */
export const THREAD_HOST_MAIN = join(DIST_DIR, 'host', 'thread-host-main.js');
export const RESCORE_THREAD_MAIN = join(DIST_DIR, 'store', 'rescore-thread-main.js');
export const DATASET_THREAD_MAIN = join(DIST_DIR, 'datasets', 'dataset-thread-main.js');
/** The inside of a play lane: some of a run's workers in a worker thread of the eval process (play-lanes.ts). */
export const PLAY_LANE_MAIN = join(DIST_DIR, 'eval-process', 'play-lane-main.js');
export const DEFAULT_OUTPUTS_DIR = resolve(process.cwd(), 'outputs');

/** The environment variable naming the llm nodeset's response cache folder (inherited by every host). */
export const LLM_CACHE_ENV = 'EVAL_LLM_CACHE_DIR';
/** The llm cache variable for a host serving runs of `outputsDir`: the one set in this process, else `<outputs>/llm-cache`. */
export const llmCacheEnv = (outputsDir: string): Record<string, string> => ({
  [LLM_CACHE_ENV]: process.env[LLM_CACHE_ENV] || join(resolve(outputsDir), 'llm-cache'),
});
/** Points the llm response cache at `<outputs>/llm-cache` for this process and its children, unless the variable is set. */
export function defaultLlmCacheDir(outputsDir: string): void {
  if (!process.env[LLM_CACHE_ENV]) process.env[LLM_CACHE_ENV] = join(resolve(outputsDir), 'llm-cache');
}
