/** `evalctl graphs [--json]`: the saved graphs, workspace overlay first. */
import { LIST_OPTIONS, parseCliArgs } from './args.js';
import { GraphCatalog } from '../graph/graph-catalog.js';

const USAGE = 'usage: evalctl graphs [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCliArgs({ args: argv, strict: true, allowPositionals: false, options: LIST_OPTIONS }, USAGE);
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const catalog = new GraphCatalog();
  const graphs = catalog.list();
  if (values.json) {
    process.stdout.write(JSON.stringify(graphs, null, 2) + '\n');
    return 0;
  }
  if (graphs.length === 0) {
    const where = [catalog.workspaceDir ? `${catalog.workspaceDir}/graphs` : undefined, catalog.builtinDir].filter(Boolean);
    process.stdout.write(`no graphs in ${where.join(' or ')}\n`);
    return 0;
  }
  const rows = [['NAME', 'SOURCE', 'DESCRIPTION'], ...graphs.map((g) => [g.name, g.source, g.description ?? ''])];
  const w0 = Math.max(...rows.map((r) => r[0]!.length));
  const w1 = Math.max(...rows.map((r) => r[1]!.length));
  process.stdout.write(rows.map((r) => `${r[0]!.padEnd(w0)}  ${r[1]!.padEnd(w1)}  ${r[2]}`.trimEnd()).join('\n') + '\n');
  return 0;
}
