/**
 * `npm run bench`: every benchmark, one after another, each printing its own table of
 * figures measured side by side in this run (absolute times vary on a shared machine; the
 * ratios are what to read). `npm run bench -- host eval` runs a subset; flags after the
 * names go to the benchmarks that take them (`npm run bench -- scaling --quick`).
 */
const BENCHES: Record<string, (flags: string[]) => Promise<void>> = {
  executor: async () => (await import('./executor.js')).benchExecutor(),
  host: async () => (await import('./host.js')).benchHost(),
  eval: async () => (await import('./eval.js')).benchEval(),
  scheduler: async () => (await import('./scheduler.js')).benchScheduler(),
  graphql: async () => (await import('./graphql.js')).benchGraphql(),
  export: async () => (await import('./export.js')).benchExport(),
  llm: async () => (await import('./llm.js')).benchLlm(),
  'llm-scale': async (flags) => (await import('./llm-scale.js')).benchLlmScale(flags),
  compare: async () => (await import('./compare.js')).benchCompare(),
  scaling: async (flags) => (await import('./scaling.js')).benchScaling(flags),
  tracing: async () => (await import('./tracing.js')).benchTracing(),
  scaleout: async (flags) => (await import('./scaleout.js')).benchScaleout(flags),
  sandbox: async () => (await import('./sandbox.js')).benchSandbox(),
};

const args = process.argv.slice(2);
const firstFlag = args.findIndex((a) => a.startsWith('--'));
const wanted = firstFlag < 0 ? args : args.slice(0, firstFlag);
const flags = firstFlag < 0 ? [] : args.slice(firstFlag);
const unknown = wanted.filter((w) => !(w in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
for (const [name, run] of Object.entries(BENCHES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  console.log(`\n=== ${name} ===`);
  await run(flags);
}
process.exit(0);
