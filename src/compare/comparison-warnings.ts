/**
 * What a comparison warns about: how two runs differ beyond their graph's shape, from the
 * manifest.json of each run directory (another model, endpoint or sampling parameter, another
 * model the provider reported, another project version or commit, nodeset code or manifest,
 * dataset files, Node major or platform). One computation for `compareRuns` and `evalctl compare`.
 */
import { manifestDifferences } from '../store/manifest-differences.js';
import { readRunManifest } from '../store/run-manifest.js';

/** One line per difference, baseline first; empty when they differ in config only, or a run has no (readable) manifest. */
export async function comparisonWarnings(baselineRunDir: string, candidateRunDir: string): Promise<string[]> {
  const [a, b] = await Promise.all([readRunManifest(baselineRunDir), readRunManifest(candidateRunDir)]);
  return manifestDifferences(a, b).map((d) => d.message);
}
