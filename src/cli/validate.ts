/**
 * `evalctl validate <file.json | graph name> [--json]`: checks a graph's shape and its node
 * types and ports against the nodesets on disk (built-ins plus the workspace overlay).
 * Prints `ok: <name> (N nodes, M edges)`, or every problem on its own line and exits 2.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { LIST_OPTIONS, parseCliArgs } from './args.js';
import { BadInputError, GraphValidationError, errorMessage } from '../errors.js';
import { parseGraph, validateGraph } from '../graph/graph.js';
import { GRAPH_NAME_PATTERN, GraphCatalog } from '../graph/graph-catalog.js';
import { NodesetRegistry } from '../nodeset-registry/registry.js';
import type { GraphSpec } from '../core/types.js';

const USAGE = 'usage: evalctl validate <file.json | graph name> [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs({ args: argv, strict: true, allowPositionals: true, options: LIST_OPTIONS }, USAGE);
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1) {
    throw new BadInputError(
      positionals.length === 0 ? `missing the graph file; ${USAGE}` : `expected one graph file, got ${positionals.length}; ${USAGE}`,
    );
  }
  const target = positionals[0]!;

  let name = target;
  let problems: string[] = [];
  let spec: GraphSpec | undefined;
  try {
    spec = await loadTarget(target);
    name = spec.name;
    const registry = await NodesetRegistry.scan();
    const graph = validateGraph(spec, registry);
    if (values.json) {
      process.stdout.write(JSON.stringify({ ok: true, name, nodes: graph.nodes.size, edges: graph.edges.length, problems: [] }) + '\n');
    } else {
      process.stdout.write(`ok: ${name} (${spec.nodes.length} nodes, ${spec.edges.length} edges)\n`);
    }
    return 0;
  } catch (err) {
    if (!(err instanceof GraphValidationError)) throw err;
    problems = err.problems;
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok: false, name, problems }) + '\n');
  } else {
    process.stderr.write(`invalid: ${name} (${problems.length} problem${problems.length === 1 ? '' : 's'})\n`);
    for (const p of problems) process.stderr.write(`${p}\n`);
  }
  return 2;
}

/** A file path; or, when no such file exists, the name of a saved graph. */
async function loadTarget(target: string): Promise<GraphSpec> {
  if (!existsSync(target) && GRAPH_NAME_PATTERN.test(target) && !target.endsWith('.json')) {
    return new GraphCatalog().load(target);
  }
  let text: string;
  try {
    text = await readFile(target, 'utf8');
  } catch (err) {
    throw new BadInputError(`cannot read graph file "${target}": ${errorMessage(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new GraphValidationError(target, [`${target} is not valid JSON: ${errorMessage(err)}`]);
  }
  return parseGraph(json, target);
}
