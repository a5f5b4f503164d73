/** A finished local run whose every episode CRASHED (the env host exits at step 2): what a retry test starts from. */
import { join } from 'node:path';
import { execa } from 'execa';
import { DIST_DIR } from '../../src/paths.js';
import type { RunSummary } from '../../src/store/types.js';

/** Runs `gridnav_planner` on the `mini` dataset with `env.crash_at_step=2` through `evalctl run --json` and returns its summary. */
export async function crashingRun(outputs: string, episodes: number, extra: readonly string[] = []): Promise<RunSummary> {
  const args = ['run', 'gridnav_planner', '--episodes', String(episodes), ...extra, '--dataset', 'mini', '--set', 'env.crash_at_step=2'];
  const r = await execa(process.execPath, [join(DIST_DIR, 'main.js'), ...args, '--outputs', outputs, '--json'], { reject: false });
  return JSON.parse(r.stdout) as RunSummary;
}
