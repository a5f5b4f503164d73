/** `evalctl nodesets [--json]`: the nodesets found on disk (built-ins and the workspace overlay). */
import { LIST_OPTIONS, parseCliArgs } from './args.js';
import { NodesetRegistry, type NodesetEntry } from '../nodeset-registry/registry.js';
import type { FunctionSpec } from '../core/types.js';

const USAGE = 'usage: evalctl nodesets [--json]';

/** `step(action?) → observation, metrics, done`, with `[batched]` for batched functions. */
export function formatFunction(fn: FunctionSpec): string {
  const inputs = fn.inputs.map((p) => (p.optional ? `${p.name}?` : p.name)).join(', ');
  const outputs = fn.outputs.map((p) => p.name).join(', ') || '()';
  return `${fn.name}(${inputs}) → ${outputs}${fn.batched ? ' [batched]' : ''}`;
}

function toJson(e: NodesetEntry): Record<string, unknown> {
  const m = e.manifest;
  return {
    name: e.name,
    source: e.source,
    dir: e.dir,
    parallelism: m.parallelism,
    version: m.version ?? null,
    description: m.description ?? null,
    host: m.module ? { module: m.module } : { command: m.command },
    functions: m.functions.map((f) => ({
      name: f.name,
      type: `${e.name}__${f.name}`,
      batched: f.batched ?? false,
      inputs: f.inputs,
      outputs: f.outputs,
      config: f.config ?? {},
    })),
    panel: m.panel ?? null,
    resources: m.resources ?? null,
  };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCliArgs({ args: argv, strict: true, allowPositionals: false, options: LIST_OPTIONS }, USAGE);
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const registry = await NodesetRegistry.scan();
  const entries = registry.list();
  if (values.json) {
    process.stdout.write(JSON.stringify(entries.map(toJson), null, 2) + '\n');
    return 0;
  }
  if (entries.length === 0) {
    process.stdout.write('no nodesets found (build first: npm run build)\n');
    return 0;
  }
  const rows = [['NAME', 'PARALLELISM', 'SOURCE', 'FUNCTIONS']];
  for (const e of entries) {
    e.manifest.functions.forEach((f, i) => {
      rows.push(i === 0 ? [e.name, e.manifest.parallelism, e.source, formatFunction(f)] : ['', '', '', formatFunction(f)]);
    });
  }
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  process.stdout.write(
    rows
      .map((r) =>
        r
          .map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n',
  );
  return 0;
}
