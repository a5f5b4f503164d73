/**
 * mergeRunDirs: `evalctl merge` on disk. Reads the partial run directories, merges them with
 * mergePartials (nothing is created when they are refused), then writes a new run directory
 * under the outputs folder that the server and dashboard read like any other: spec.json
 * (without the shard), graph.json, manifest.json (when the partials agree on one), summary.json
 * (COMPLETED), each episode's folder copied from its partial, stdout.log saying where it came
 * from, and _DONE.
 */
import { cp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BadInputError } from '../errors.js';
import { writeJsonAtomic } from './atomic.js';
import { MergeError, mergedManifest, mergePartials, type MergedRun } from './merge-partials.js';
import { readRunManifest, writeRunManifest } from './run-manifest.js';
import { sumReportedModels } from './reported-models.js';
import { describeIndices } from '../spec/shards.js';
import { FILES, createRunDir, episodeDir, readSpec, readSummary, touchDone, writeSpec, writeSummary } from './run-dir.js';

export interface MergeRunDirsResult extends MergedRun {
  /** The merged run's directory. */
  dir: string;
}

/** Merges the partial run directories `dirs` into a new run under `outputsDir`. */
export async function mergeRunDirs(dirs: readonly string[], outputsDir: string): Promise<MergeRunDirsResult> {
  const partials = await Promise.all(
    dirs.map(async (d) => {
      const source = resolve(d);
      if (!existsSync(join(source, FILES.spec)) || !existsSync(join(source, FILES.summary))) {
        throw new BadInputError(`"${d}" is not a run directory (it has no ${FILES.spec} and ${FILES.summary})`);
      }
      return { source, spec: await readSpec(source), summary: await readSummary(source) };
    }),
  );
  // Checked once before the run directory exists, so a refused merge leaves nothing behind.
  const probe = mergePartials(partials, { runId: '00000000_000000' });
  const manifest = mergedManifest(
    await Promise.all(partials.map(async (p) => ({ source: p.source, manifest: await readRunManifest(p.source) }))),
  );
  // A record whose folder is gone (logs, assets) would be a run the dashboard and exports show with a hole.
  const noFolder = [...probe.sourceOf].filter(([index, source]) => !existsSync(episodeDir(source, index)));
  if (noFolder.length > 0)
    throw new MergeError(
      'MERGE_GAP',
      `episodes ${describeIndices(noFolder.map(([i]) => i))} have a record but no episode folder in ${[...new Set(noFolder.map(([, s]) => s))].join(', ')}: play that shard again`,
    );
  const { runId, dir } = createRunDir(outputsDir);
  const merged = mergePartials(partials, { runId });
  await writeSpec(dir, merged.spec);
  if (merged.spec.graph) await writeJsonAtomic(join(dir, FILES.graph), merged.spec.graph);
  if (manifest) {
    // The partials' reported models are each over their own shards: counted again over the merged records.
    const { reportedModels: _partial, ...rest } = manifest;
    const reported = sumReportedModels(merged.summary.episodes);
    await writeRunManifest(dir, reported.length > 0 ? { ...rest, reportedModels: reported } : rest);
  }
  for (const [index, source] of merged.sourceOf) await cp(episodeDir(source, index), episodeDir(dir, index), { recursive: true });
  const lines = partials.map((p) => `merged ${p.summary.episodes.length} episode(s) from ${p.source} (run ${p.spec.runId})`);
  await writeFile(join(dir, FILES.stdout), lines.join('\n') + '\n');
  await writeSummary(dir, merged.summary);
  await touchDone(dir);
  return { ...merged, dir };
}
