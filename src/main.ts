#!/usr/bin/env node
/**
 * `evalctl`: the subcommands in COMMANDS below.
 * Each subcommand lives in src/cli/<name>.ts and exports `run(argv): Promise<number>` (the exit code).
 */
import module from 'node:module';
import { resolve } from 'node:path';
import { errorMessage, isInputFault } from './errors.js';
import { discardEvalSpare, startEvalSpareFor } from './cli/eval-spare.js';
import { takeModelKeys } from './core/model-keys.js';

// Model keys leave the environment before anything is started (docs/llm.md, "Keys").
takeModelKeys();
// A relative workspace is the user's working directory's: eval processes and hosts start in other folders.
if (process.env.ACTIVE_WORKSPACE_DIR) process.env.ACTIVE_WORKSPACE_DIR = resolve(process.env.ACTIVE_WORKSPACE_DIR);
useCompileCache();

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> }> = {
  serve: { summary: 'start the server (GraphQL + dashboard)', load: () => import('./cli/serve.js') },
  run: { summary: 'run a batch of episodes of a graph', load: () => import('./cli/run.js') },
  episode: { summary: 'run one episode and print its record', load: () => import('./cli/episode.js') },
  graphs: { summary: 'list the graphs', load: () => import('./cli/graphs.js') },
  nodesets: { summary: 'list the nodesets', load: () => import('./cli/nodesets.js') },
  datasets: { summary: 'list the datasets, or show one with a preview', load: () => import('./cli/datasets.js') },
  validate: { summary: 'validate a graph file', load: () => import('./cli/validate.js') },
  report: { summary: "rebuild and print a run's evaluation report", load: () => import('./cli/report.js') },
  rescore: { summary: "score a run's stored answers again with another scorer", load: () => import('./cli/rescore.js') },
  export: { summary: "export a run's episodes (CSV, JSONL), summary (JSON) or directory (tar.gz)", load: () => import('./cli/export.js') },
  compare: { summary: 'compare runs episode by episode (paired)', load: () => import('./cli/compare.js') },
  gate: { summary: 'pass, fail or inconclusive: a candidate run against a baseline, for CI', load: () => import('./cli/gate.js') },
  plan: { summary: 'minimum detectable effect and episodes needed for a run', load: () => import('./cli/plan.js') },
  audit: { summary: 'check that a finished run gives the same records at another worker count', load: () => import('./cli/audit.js') },
  retry: { summary: "play a finished run's failed or missing episodes again, as a new attempt", load: () => import('./cli/retry.js') },
  worker: { summary: 'take shards of `serve --redis` runs and play them on this machine', load: () => import('./cli/worker.js') },
  merge: { summary: 'merge the partial run directories of `run --shard k/K` into one run', load: () => import('./cli/merge.js') },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `usage: evalctl <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nevalctl <command> --help for its options`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`evalctl: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  // `run` starts its eval process now, so that it loads while the command loads and checks the run.
  if (name === 'run') startEvalSpareFor(rest);
  try {
    const mod = await command.load();
    return await mod.run(rest);
  } finally {
    discardEvalSpare();
  }
}

/**
 * Node ≥ 22.1 keeps the code it compiles for these modules on disk (os.tmpdir(), or
 * NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off) and reuses it while a file is
 * unchanged. The variable is set for the processes and threads started from here (eval
 * processes, play lanes, hosts), which then cache from their first module. Node 20 has no such cache.
 */
function useCompileCache(): void {
  // Typed by hand: the project's Node typings are Node 20's.
  const { enableCompileCache } = module as { enableCompileCache?: () => { directory?: string } };
  const enabled = enableCompileCache?.();
  if (enabled?.directory && !process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = enabled.directory;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const code = (err as { code?: string }).code;
    process.stderr.write(`evalctl: ${errorMessage(err)}\n`);
    process.exitCode = isInputFault(code) ? 2 : 1;
  },
);
